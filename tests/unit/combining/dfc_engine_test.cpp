// The DFC engine (ferrite/combining/dfc.hpp, dfc_node_pool.hpp): the node bitmap, the
// announcement protocol, recovery and detectability, and regression tests for the defects
// of the papers' pseudocode that concern the engine (docs/references.md, DFC defects #1, #2, #10) and
// for the early-return hazard of the papers' waiting.
#include "ferrite/combining/dfc.hpp"

#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "../containers/dfc_test_support.hpp"
#include "ferrite/containers/dfc_queue.hpp"
#include "ferrite/containers/dfc_stack.hpp"

namespace ferrite {
namespace {

using combining::dfc_status;
using combining::node_bitmap;
using ferrite_test::announce_raw;
using ferrite_test::dfc_region_buffer;
using stack = dfc_stack<std::uint64_t>;

TEST(DfcNodeBitmap, AllocatesEveryNodeOnceBeyond4096) {
    for (std::uint64_t cap : {1ull, 63ull, 64ull, 65ull, 4096ull, 4097ull, 300000ull}) {
        node_bitmap b(cap);
        std::set<std::uint64_t> got;
        for (std::uint64_t i = 0; i < cap; ++i) {
            const auto n = b.allocate();
            ASSERT_GE(n, 1u);
            ASSERT_LE(n, cap);
            ASSERT_TRUE(got.insert(n).second) << "node " << n << " handed out twice (capacity " << cap << ")";
        }
        EXPECT_EQ(b.allocate(), 0u) << "capacity " << cap;
        EXPECT_EQ(b.used(), cap);
        b.release(cap / 2 + 1);
        EXPECT_EQ(b.allocate(), cap / 2 + 1);
        if (cap > 4096) {
            EXPECT_GE(b.levels(), 3u);
        }
    }
}

TEST(DfcNodeBitmap, TakeAndReleaseAreIdempotent) {
    node_bitmap b(200);
    b.take(5);
    b.take(5);
    EXPECT_EQ(b.used(), 1u);
    EXPECT_FALSE(b.is_free(5));
    b.release(5);
    b.release(5);
    EXPECT_EQ(b.used(), 0u);
    for (std::uint64_t n = 1; n <= 200; ++n) b.take(n);
    EXPECT_EQ(b.allocate(), 0u);
    b.release(130);
    EXPECT_EQ(b.allocate(), 130u);
}

class DfcEngineTest : public ::testing::Test {
protected:
    static constexpr unsigned threads = 3;
    dfc_region_buffer region{stack::required_bytes(threads, 64)};
};

TEST_F(DfcEngineTest, CreateRejectsBadRegions) {
    EXPECT_THROW(stack::create(static_cast<std::byte*>(region.data()) + 8, region.size() - 64, 1), usage_error);
    EXPECT_THROW(stack::create(region.data(), 128, 1), usage_error);
    EXPECT_THROW(stack::create(region.data(), region.size(), 0), usage_error);
    EXPECT_THROW(stack::open(region.data(), region.size()), error) << "no magic yet";
    (void)stack::create(region.data(), region.size(), threads);
    EXPECT_THROW(dfc_queue<std::uint64_t>::open(region.data(), region.size()), error) << "a stack is not a queue";
}

// Defect #2: BOTTOM must differ from 0, and a never-used slot (all fields 0, cEpoch 0) must
// not be re-armed and executed by recovery.
TEST_F(DfcEngineTest, RecoveryOfNeverUsedSlotsExecutesNothing) {
    // Crash before the first phase committed (cEpoch 0): thread 0 announced push(0) durably,
    // threads 1 and 2 never announced anything (all their fields are 0, epoch 0 == cEpoch).
    (void)stack::create(region.data(), region.size(), threads);
    auto r = region.layout(threads);
    announce_raw(r, 0, stack::push_op, 0);
    ASSERT_EQ(r.epoch->epoch.load(), 0u);
    ASSERT_EQ(r.threads[1].ann[0].name.load(), 0u);
    auto s = stack::open(region.data(), region.size());
    s.recover();
    // Re-arming the zero slots would run two phantom pops (name 0), one eliminating the push.
    EXPECT_EQ(s.unsynchronized_contents(), std::vector<std::uint64_t>{0}) << "a phantom operation ran";
    for (unsigned t = 1; t < threads; ++t) {
        const auto rec = s.recover(t);
        EXPECT_EQ(rec.seq, 0u);
        EXPECT_FALSE(rec.took_effect);
    }
    const auto rec0 = s.recover(0);
    EXPECT_EQ(rec0.seq, 1u);
    EXPECT_TRUE(rec0.took_effect);
    EXPECT_EQ(rec0.response.status, dfc_status::ack);
    EXPECT_EQ(s.pop(1), std::optional<std::uint64_t>(0)) << "value 0 is a value, not BOTTOM";
    EXPECT_EQ(s.recover(1).response.value, 0u);
    EXPECT_EQ(s.recover(1).response.status, dfc_status::value);
}

// Defect #1: the combiner must read every thread's `valid` (tAnn[i]), not its own.
TEST_F(DfcEngineTest, CombinerCollectsOtherThreadsAnnouncements) {
    auto s = stack::create(region.data(), region.size(), threads);
    auto r = region.layout(threads);
    announce_raw(r, 1, stack::push_op, 11);
    announce_raw(r, 2, stack::push_op, 22);
    ASSERT_TRUE(s.push(0, 33));  // thread 0 combines all three
    EXPECT_EQ(r.threads[1].ann[1].status.load(), static_cast<std::uint64_t>(dfc_status::ack));
    EXPECT_EQ(r.threads[2].ann[1].status.load(), static_cast<std::uint64_t>(dfc_status::ack));
    EXPECT_EQ(s.unsynchronized_contents().size(), 3u);
    EXPECT_EQ(s.engine().stats().passes, 1u);
}

// Defect #10: the sequence number tells "my last operation" from "the one before".
TEST_F(DfcEngineTest, SequenceNumberDistinguishesIncompleteAnnouncement) {
    {
        auto s = stack::create(region.data(), region.size(), threads);
        ASSERT_TRUE(s.push(0, 5));
        EXPECT_EQ(s.next_seq(0), 2u);
        // Crash in the middle of op 2's announcement: its slot reached the media but for
        // the seq (the slot's last store).
        announce_raw(region.layout(threads), 0, stack::pop_op, 0, /*complete=*/false);
    }
    auto s = stack::open(region.data(), region.size());
    const auto rec = s.recover(0);
    EXPECT_EQ(rec.seq, 1u) << "op 2 was never durably announced: the latest is op 1";
    EXPECT_TRUE(rec.took_effect);
    EXPECT_EQ(rec.response.status, dfc_status::ack) << "op 1's response (a push)";
    EXPECT_EQ(s.unsynchronized_contents(), std::vector<std::uint64_t>{5}) << "op 2 (a pop) ran";
    // Retrying op 2 reuses seq 2.
    EXPECT_EQ(s.next_seq(0), 2u);
    EXPECT_EQ(s.pop(0), std::optional<std::uint64_t>(5));
    EXPECT_EQ(s.recover(0).seq, 2u);
    EXPECT_TRUE(s.recover(0).took_effect);
}

TEST_F(DfcEngineTest, DurableAnnouncementIsExecutedByRecoveryExactlyOnce) {
    {
        auto s = stack::create(region.data(), region.size(), threads);
        ASSERT_TRUE(s.push(0, 5));
        announce_raw(region.layout(threads), 1, stack::pop_op, 0);  // announced, crash before any combine
    }
    for (int restart = 0; restart < 3; ++restart) {
        auto s = stack::open(region.data(), region.size());
        const auto rec = s.recover(1);
        EXPECT_EQ(rec.seq, 1u);
        EXPECT_TRUE(rec.took_effect);
        EXPECT_EQ(rec.response.status, dfc_status::value);
        EXPECT_EQ(rec.response.value, 5u);
        EXPECT_TRUE(s.unsynchronized_contents().empty()) << "restart " << restart;
    }
}

// A crash inside a phase after everything but the commit (cEpoch c+1) persisted: recovery
// re-arms the phase's operations (epoch == cEpoch) and re-executes them on the old roots.
TEST_F(DfcEngineTest, CrashedPhaseIsReexecuted) {
    auto r = region.layout(threads);
    std::vector<ferrite_test::cache_line> before;
    {
        auto s = stack::create(region.data(), region.size(), threads);
        ASSERT_TRUE(s.push(0, 1));
        announce_raw(r, 1, stack::pop_op, 0);
        before = region.snapshot();
        ASSERT_TRUE(s.push(0, 2));  // eliminated with thread 1's pop
    }
    region.restore_range(before, region.offset_of(r.epoch), 64);  // the commit never happened
    auto s = stack::open(region.data(), region.size());
    s.recover();
    const auto r0 = s.recover(0), r1 = s.recover(1);
    EXPECT_TRUE(r0.took_effect && r1.took_effect);
    EXPECT_EQ(r0.seq, 2u);
    // Either linearization of {push 2, pop} on [1] is fine; the contents must agree.
    const auto c = s.unsynchronized_contents();
    if (r1.response.value == 2)
        EXPECT_EQ(c, (std::vector<std::uint64_t>{1}));
    else
        EXPECT_EQ(c, (std::vector<std::uint64_t>{2}));
}

TEST_F(DfcEngineTest, OddEpochIsRoundedUpAndThePhaseKept) {
    auto r = region.layout(threads);
    {
        auto s = stack::create(region.data(), region.size(), threads);
        ASSERT_TRUE(s.push(0, 1));
    }
    r.epoch->epoch = r.epoch->epoch.load() - 1;  // c+1 persisted, c+2 lost
    auto s = stack::open(region.data(), region.size());
    s.recover();
    EXPECT_EQ(s.engine().epoch() % 2, 0u);
    EXPECT_EQ(s.unsynchronized_contents(), std::vector<std::uint64_t>{1});
    EXPECT_EQ(s.recover(0).response.status, dfc_status::ack);
}

TEST_F(DfcEngineTest, StatsCountTheCombinersPersistence) {
    auto s = stack::create(region.data(), region.size(), threads);
    const auto before = pmem::thread_counters();
    ASSERT_TRUE(s.push(0, 1));
    const auto total = pmem::thread_counters() - before;
    const auto st = s.engine().stats();
    EXPECT_EQ(st.passes, 1u);
    EXPECT_EQ(st.operations, 1u);
    // Announcement: nothing (the papers: 2 pwb + 2 pfence); phase with one push: ann + node
    // + cEpoch line (which carries the roots) = 3 pwb, 2 pfence (the papers': 4 pwb, with the
    // roots written back alone).
    EXPECT_EQ(st.combiner.pwb_lines, 3u);
    EXPECT_EQ(st.combiner.pfences, 2u);
    EXPECT_EQ(total.pwb_lines, 3u);
    EXPECT_EQ(total.pfences, 2u);
    EXPECT_EQ(st.total, total);  // nothing outside the phase
}

// The sticky combiner: a thread that did not run the last phase leaves a free lock alone for
// a while, waiting for the last combiner; when nobody comes (here: one OS thread alternating
// two thread ids, so the lock is always free) each deferral runs out and halves the budget,
// down to its floor, and the operations still complete.
TEST_F(DfcEngineTest, DeferralToAnAbsentLastCombinerShrinksToItsFloor) {
    using engine = stack::engine_type;
    auto s = stack::create(region.data(), region.size(), threads);
    EXPECT_EQ(s.engine().deferral_budget(), engine::max_deferral);
    ASSERT_TRUE(s.push(0, 1));  // thread 0 runs the phase: the last combiner
    EXPECT_EQ(s.engine().deferral_budget(), engine::max_deferral) << "no deferral: nobody ran a phase before";
    ASSERT_TRUE(s.push(1, 2));  // waits for thread 0, who never comes
    EXPECT_EQ(s.engine().deferral_budget(), engine::max_deferral / 2);
    ASSERT_TRUE(s.push(1, 3)) << "thread 1 is the last combiner now: no deferral";
    EXPECT_EQ(s.engine().deferral_budget(), engine::max_deferral / 2);
    for (unsigned i = 0; i < 16; ++i) ASSERT_TRUE(s.push(i % 2, 10 + i));
    EXPECT_EQ(s.engine().deferral_budget(), engine::min_deferral);
    EXPECT_EQ(s.unsynchronized_contents().size(), 19u);
}

}  // namespace
}  // namespace ferrite
