// ferrite::catalog with the detectable PFC structures (kinds 12 dpfc_stack, 13 dpfc_queue;
// containers/dpfc_kinds.hpp): created on first use, found again after a restart with their
// contents, each thread's latest operation detectable through the catalog's recovery (an
// uncommitted pass voided by catalog::recover_pool, not by the structure's own open), more
// thread ids than created refused, and a stack never opened as a queue.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "catalog_test_support.hpp"

namespace ferrite {
namespace {

using ferrite_test::CatalogTest;
using u64 = std::uint64_t;

TEST_F(CatalogTest, NamedDpfcStructuresPersistAndReportEachThreadsLatestOperation) {
    {
        catalog names(*pool_, *heap_);
        auto s = names.open<dpfc_stack<u64>>("undo", 2, /*capacity*/ 64);
        auto q = names.open<dpfc_queue<u64>>("jobs", 2, 64);
        for (u64 i = 0; i < 10; ++i) {
            ASSERT_TRUE(s->push(i % 2, i));
            ASSERT_TRUE(q->enqueue(i % 2, 100 + i));
        }
        EXPECT_EQ(s->pop(1), 9u);
        EXPECT_EQ(q->dequeue(0), 100u);
        EXPECT_EQ((names.open<dpfc_stack<u64>>("undo", 2)), s) << "one object per name";
    }
    reopen();
    catalog names(*pool_, *heap_);
    const auto objects = names.list();
    ASSERT_EQ(objects.size(), 2u);
    EXPECT_EQ(objects[0].kind, "dpfc_stack");
    EXPECT_EQ(objects[1].kind, "dpfc_queue");
    EXPECT_EQ(objects[0].element_size, 8u);
    const auto checks = names.check_objects();
    ASSERT_EQ(checks.size(), 2u);
    EXPECT_EQ(checks[0].problem, "");
    EXPECT_EQ(checks[0].detail, "9 elements, capacity 64, 2 thread ids");
    EXPECT_EQ(checks[1].detail, "9 elements, capacity 64, 2 thread ids");
    EXPECT_NO_THROW(names.validate());

    auto s = names.open<dpfc_stack<u64>>("undo", 2);
    auto q = names.open<dpfc_queue<u64>>("jobs", 1);  // fewer thread ids: opens
    const auto s1 = s->recover(1), s0 = s->recover(0);
    EXPECT_EQ(s1.seq, 6u) << "thread 1: 5 pushes, then the pop";
    EXPECT_TRUE(s1.took_effect);
    EXPECT_EQ(s1.response.status, combining::dfc_status::value);
    EXPECT_EQ(s1.response.value, 9u);
    EXPECT_EQ(s0.seq, 5u);
    EXPECT_EQ(s0.param, 8u);
    EXPECT_EQ(s->next_seq(1), 7u);
    const auto q0 = q->recover(0);
    EXPECT_EQ(q0.seq, 6u);
    EXPECT_EQ(q0.response.value, 100u);
    EXPECT_EQ(s->pop(0), 8u);
    EXPECT_EQ(q->dequeue(0), 101u);
    EXPECT_TRUE(heap_->check().empty());
}

// What a crash leaves when thread 0's spilled result line reached the media but its pass's
// state record did not (thread 0 past the inline seq limit, so its result spills): catalog::recover_pool (the kind's recover) voids the orphan, so the
// thread learns through the catalog that its push did not take effect, and it stays so.
TEST_F(CatalogTest, DpfcDetectabilityWorksThroughTheCatalogsRecovery) {
    {
        catalog names(*pool_, *heap_);
        ASSERT_TRUE(names.open<dpfc_stack<u64>>("s", 2, 16)->push(1, 7));
    }
    reopen();  // recovery copies the redo value into the array: nothing more to write
    auto* region = pool_->base() + alloc::name_directory::open_or_create(*pool_, *heap_).find("s")->anchor;
    {  // thread 0's operations spill to its line from now on (a seq past the inline limit)
        auto* line0 = reinterpret_cast<containers::dpfc_result*>(region + containers::dpfc_region::results_offset);
        *line0 = {};
        line0->seq = containers::dpfc_inline_seq_limit - 1;
        line0->name = containers::dpfc_push_op;
        line0->response.status = combining::dfc_status::ack;
        line0->epoch = 1;
    }
    constexpr u64 L = containers::dpfc_inline_seq_limit;
    std::vector<std::byte> records(128);
    std::memcpy(records.data(), region + 64, 128);  // both state records
    {
        catalog names(*pool_, *heap_);
        ASSERT_TRUE(names.open<dpfc_stack<u64>>("s", 2)->push(0, 8));
    }
    std::memcpy(region + 64, records.data(), 128);  // the pass's state record lost, its result kept
    reopen();
    {
        // recover_pool alone (the kind's recover, before any open) voided it on the media.
        const auto* again = pool_->base() + alloc::name_directory::open_or_create(*pool_, *heap_).find("s")->anchor;
        const auto* result0 = reinterpret_cast<const containers::dpfc_result*>(again + containers::dpfc_region::results_offset);
        EXPECT_EQ(result0->seq, L);
        EXPECT_EQ(result0->voided, 1u);
    }
    {
        catalog names(*pool_, *heap_);
        auto s = names.open<dpfc_stack<u64>>("s", 2);
        const auto r = s->recover(0);
        EXPECT_EQ(r.seq, L);
        EXPECT_FALSE(r.took_effect) << "the catalog's recovery voided the uncommitted pass";
        EXPECT_EQ(r.param, 8u);
        EXPECT_EQ(s->next_seq(0), L + 1);
        EXPECT_EQ(s->unsynchronized_contents(), std::vector<u64>{7});
        EXPECT_TRUE(s->push(1, 9));  // a later pass with the epoch the orphan had
    }
    reopen();
    catalog names(*pool_, *heap_);
    auto s = names.open<dpfc_stack<u64>>("s", 2);
    EXPECT_FALSE(s->recover(0).took_effect);
    EXPECT_EQ(s->unsynchronized_contents(), (std::vector<u64>{9, 7}));
}

TEST_F(CatalogTest, DpfcWrongKindMoreThreadsOrDamageIsRefusedAndChangesNothing) {
    {
        catalog names(*pool_, *heap_);
        auto s = names.open<dpfc_stack<u64>>("s", 2, 8);
        ASSERT_TRUE(s->push(0, 1));
        EXPECT_THROW((void)names.open<dpfc_stack<u64>>("s", 3), usage_error) << "while it is open";
        EXPECT_THROW((void)names.open<dpfc_stack<u64>>("z", 0, 8), usage_error);
    }
    reopen();
    {
        catalog names(*pool_, *heap_);
        EXPECT_THROW((void)names.open<dpfc_stack<u64>>("s", 3), usage_error) << "after a restart";
        try {
            (void)names.open<dpfc_queue<u64>>("s", 2);
            ADD_FAILURE() << "a stack opened as a queue";
        } catch (const pool_error& e) {
            EXPECT_EQ(e.kind(), pool_errc::type_mismatch);
        }
        try {
            (void)names.open<dpfc_stack<std::uint32_t>>("s", 2);
            ADD_FAILURE() << "u64 elements opened as u32";
        } catch (const pool_error& e) {
            EXPECT_EQ(e.kind(), pool_errc::type_mismatch);
        }
        EXPECT_EQ(names.open<dpfc_stack<u64>>("s", 2)->unsynchronized_contents(), std::vector<u64>{1});
    }
    // A damaged region: refused by validation (catalog and open alike), nothing written.
    auto* region = pool_->base() + alloc::name_directory::open_or_create(*pool_, *heap_).find("s")->anchor;
    reinterpret_cast<containers::dpfc_header*>(region)->element_size = 4;
    std::vector<std::byte> before(region, region + 512);
    catalog names(*pool_, *heap_);
    EXPECT_THROW(names.validate(), damaged_pool);
    EXPECT_THROW((void)names.open<dpfc_stack<u64>>("s", 2), damaged_pool);
    EXPECT_EQ(std::memcmp(before.data(), region, before.size()), 0);
}

}  // namespace
}  // namespace ferrite
