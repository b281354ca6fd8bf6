// ferrite::dpfc_stack and dpfc_queue (dpfc_stack.hpp, dpfc_layout.hpp): semantics against a model,
// full and empty, one pfence per pass, detectability (recover(tid) and next_seq), the crash
// images a pass can leave (a state record without its spilled results, orphan results, an
// inline result lost with its record, a copy-out lost, a torn other record, redo values not
// yet in the array) and their recovery, a pass with inline and spilled results, validation
// of damaged regions and of format 1 (nothing written), and concurrent exactly-once use.
#include "ferrite/containers/dpfc_stack.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "dfc_test_support.hpp"
#include "ferrite/pmem/counters.hpp"

namespace ferrite {
namespace {

namespace c = containers;
using u64 = std::uint64_t;
using stk = dpfc_stack<u64>;
using ferrite_test::dfc_region_buffer;
using combining::dfc_status;

struct fixture {
    explicit fixture(unsigned n_threads = 2, u64 n_capacity = 64)
        : threads(n_threads), capacity(n_capacity), buf(stk::required_bytes(n_threads, n_capacity)) {}
    stk create(c::dpfc_options o = {}) { return stk::create(buf.data(), buf.size(), threads, capacity, o); }
    stk open() { return stk::open(buf.data(), buf.size()); }
    c::dpfc_region r() { return c::dpfc_region::at(buf.data(), threads); }
    // Thread `tid`'s line as if its latest operation (a push of `param`, taken in the create's
    // epoch 1) had seq dpfc_inline_seq_limit - 1: its next operations do not fit inline and
    // spill (the path every pass takes for the results its record has no room for).
    void past_inline_limit(unsigned tid, u64 param) {
        auto& e = r().results[tid];
        e = {};
        e.seq = c::dpfc_inline_seq_limit - 1;
        e.name = stk::push_op;
        e.param = param;
        e.response = {dfc_status::ack, 0};
        e.epoch = 1;
    }
    unsigned threads;
    u64 capacity;
    dfc_region_buffer buf;
};

TEST(DpfcStack, BehavesLikeAStackUpToItsCapacity) {
    fixture f(1, 64);
    auto s = f.create();
    std::vector<u64> model;
    std::mt19937_64 rng(7);
    for (int i = 0; i < 2000; ++i) {
        if (rng() % 3 != 0) {
            const bool ok = s.push(0, u64(i));
            EXPECT_EQ(ok, model.size() < 64);
            if (ok) model.push_back(u64(i));
        } else {
            const auto v = s.pop(0);
            if (model.empty()) {
                EXPECT_FALSE(v);
            } else {
                ASSERT_TRUE(v);
                EXPECT_EQ(*v, model.back());
                model.pop_back();
            }
        }
    }
    std::vector<u64> top_first(model.rbegin(), model.rend());
    EXPECT_EQ(s.unsynchronized_contents(), top_first);
    auto again = f.open();
    EXPECT_EQ(again.unsynchronized_contents(), top_first);
}

TEST(DpfcStack, OnePfencePerPassResultsIncluded) {
    fixture f(1);
    auto s = f.create();
    auto before = pmem::thread_counters();
    s.push(0, 5);
    auto d = pmem::thread_counters() - before;
    EXPECT_EQ(d.pfences, 1u) << "the state record (the result inline, the value in its redo) under one fence";
    EXPECT_EQ(d.pwb_lines, 0u) << "the result rides in the record, the value's line is deferred";
    EXPECT_EQ(d.nt_stores, 8u) << "the record: one line of NT stores";
    EXPECT_EQ(f.r().committed().inlined(), 1u);
    before = pmem::thread_counters();
    EXPECT_EQ(s.pop(0), 5u);
    d = pmem::thread_counters() - before;
    EXPECT_EQ(d.pfences, 1u);
    EXPECT_EQ(d.pwb_lines, 0u) << "the record alone: the popped value is never written back";
    s.push(0, 6);
    before = pmem::thread_counters();
    s.push(0, 7);
    d = pmem::thread_counters() - before;
    EXPECT_EQ(d.pwb_lines, 1u) << "the previous pass's value (kept) is written back by this pass";
    EXPECT_EQ(f.r().committed().redo(), 2u) << "and repeated in this pass's record";
    EXPECT_EQ(f.r().committed().inlined(), 1u) << "2 redo values + 1 inline result: the record's 4 words";
    s.push(0, 8);
    EXPECT_EQ(f.r().committed().redo(), 2u) << "a value written back by an earlier, fenced pass is not repeated";
    EXPECT_EQ(f.r().results[0].seq, 0u) << "no result line written at all";
    auto two = fixture(1);
    auto t = two.create({.elimination = true, .one_fence = false});
    before = pmem::thread_counters();
    t.push(0, 5);
    EXPECT_EQ((pmem::thread_counters() - before).pfences, 2u) << "the two-fence ablation";
}

TEST(DpfcStack, RecoverReportsEachThreadsLatestOperation) {
    fixture f(3);
    auto s = f.create();
    EXPECT_EQ(s.recover(0).seq, 0u);
    EXPECT_EQ(s.next_seq(1), 1u);
    s.push(1, 10);
    s.push(1, 11);
    EXPECT_EQ(s.pop(2), 11u);
    EXPECT_EQ(s.pop(2), 10u);
    auto r = s.recover(1);
    EXPECT_EQ(r.seq, 2u);
    EXPECT_TRUE(r.took_effect);
    EXPECT_EQ(r.name, u64(stk::push_op));
    EXPECT_EQ(r.param, 11u);
    EXPECT_EQ(r.response.status, dfc_status::ack);
    auto again = f.open();
    r = again.recover(2);
    EXPECT_EQ(r.seq, 2u);
    EXPECT_TRUE(r.took_effect);
    EXPECT_EQ(r.response.status, dfc_status::value);
    EXPECT_EQ(r.response.value, 10u);
    EXPECT_EQ(again.next_seq(2), 3u);
    EXPECT_EQ(again.next_seq(0), 1u);
    EXPECT_THROW((void)again.recover(3), usage_error);
}

// A pass that crashed with its state record durable but not its spilled result line did
// not commit: the older record is the state, and the thread recovers its previous operation.
TEST(DpfcStack, AStateRecordWithoutItsSpilledResultIsNotCommitted) {
    fixture f(2);
    constexpr u64 L = c::dpfc_inline_seq_limit;
    {
        auto s = f.create();
        s.push(0, 1);
    }
    f.past_inline_limit(0, 1);  // thread 0's operations spill from now on
    const auto image = f.buf.snapshot();
    {
        auto s = f.open();
        EXPECT_EQ(s.next_seq(0), L);
        s.push(0, 2);
        ASSERT_EQ(f.r().committed().spilled(), 1u);
    }
    // Keep the new state record, lose thread 0's new result line.
    f.buf.restore_range(image, c::dpfc_region::results_offset, 64);
    auto s = f.open();
    EXPECT_EQ(s.unsynchronized_contents(), std::vector<u64>{1});
    const auto r = s.recover(0);
    EXPECT_EQ(r.seq, L - 1);
    EXPECT_TRUE(r.took_effect);
    EXPECT_EQ(r.param, 1u);
    EXPECT_EQ(s.next_seq(0), L);
    EXPECT_TRUE(s.push(0, 3));
    EXPECT_EQ(s.unsynchronized_contents(), (std::vector<u64>{3, 1}));
    EXPECT_EQ(f.open().recover(0).seq, L);
}

// The other way round: the spilled result line durable, the state record not: the operation
// did not take effect, recovery says so, and that stays so after later passes.
TEST(DpfcStack, AnOrphanResultIsClearedAndStaysNotTaken) {
    fixture f(2);
    constexpr u64 L = c::dpfc_inline_seq_limit;
    {
        auto s = f.create();
        s.push(1, 7);
    }
    f.past_inline_limit(0, 0);
    (void)f.open();  // recovery moves the redo value into the array: the next open writes nothing
    const auto image = f.buf.snapshot();
    {
        auto s = f.open();
        s.push(0, 8);
    }
    f.buf.restore_range(image, 64, 128);  // both state records as before the pass
    {
        auto s = f.open();
        EXPECT_EQ(s.unsynchronized_contents(), std::vector<u64>{7});
        auto r = s.recover(0);
        EXPECT_EQ(r.seq, L);
        EXPECT_FALSE(r.took_effect);
        EXPECT_EQ(r.param, 8u);
        EXPECT_EQ(s.next_seq(0), L + 1);
        s.push(1, 9);  // a later pass with the epoch the orphan had
        s.push(1, 10);
    }
    auto s = f.open();
    EXPECT_FALSE(s.recover(0).took_effect);
    EXPECT_EQ(s.unsynchronized_contents(), (std::vector<u64>{10, 9, 7}));
}

// An inline result lost with its record (the pass's one line did not persist) leaves no
// trace: the thread recovers its previous operation and runs it again with the same seq.
// Thread 0 pushes 1 (recovered since, so nothing is left to do on open), then 2; returns the
// image between the two.
auto push_1_then_2(fixture& f) {
    {
        auto s = f.create();
        s.push(0, 1);
    }
    (void)f.open();
    auto image = f.buf.snapshot();
    {
        auto s = f.open();
        s.push(0, 2);
    }
    return image;
}

TEST(DpfcStack, AnInlineResultLostWithItsRecordLeavesNoTrace) {
    fixture f(2);
    const auto image = push_1_then_2(f);
    f.buf.restore_range(image, 64, 128);
    auto s = f.open();
    const auto r = s.recover(0);
    EXPECT_EQ(r.seq, 1u);
    EXPECT_TRUE(r.took_effect);
    EXPECT_EQ(r.param, 1u);
    EXPECT_EQ(s.next_seq(0), 2u);
    EXPECT_EQ(s.unsynchronized_contents(), std::vector<u64>{1});
}

// A crash in the middle of a pass's NT write of its record: any mix of the old and the new
// words may persist. The mix fails the check, so the older record is the state and the
// pass did not take effect, whichever words persisted.
TEST(DpfcStack, ATornNewestRecordIsNoCandidate) {
    fixture f(2);
    const auto image = push_1_then_2(f);
    const auto after = f.buf.snapshot();
    const auto n = f.r().newest();
    unsigned torn = 0;
    for (unsigned word = 0; word < 8; ++word) {  // the new line but one word, and one word of it alone
        for (const bool only : {false, true}) {
            f.buf.restore(after);
            auto& rec = f.r().state[n];
            const auto* old_words = reinterpret_cast<const u64*>(reinterpret_cast<const std::byte*>(image.data()) + 64 + 64 * n);
            auto* words = reinterpret_cast<u64*>(&rec);
            for (unsigned k = 0; k < 8; ++k)
                if ((k == word) != only) words[k] = old_words[k];
            if (rec.whole()) continue;  // the mix equals one of the two records (a word the pass did not change)
            ++torn;
            auto s = f.open();
            const auto r = s.recover(0);
            EXPECT_EQ(r.seq, 1u) << word << only;
            EXPECT_TRUE(r.took_effect) << word << only;
            EXPECT_EQ(s.unsynchronized_contents(), std::vector<u64>{1}) << word << only;
        }
    }
    EXPECT_GE(torn, 8u) << "mixes that differ from both records";
}

// Pass E serves thread 0 inline; pass E + 1 serves thread 1 only and has no room to carry
// thread 0's result (2 redo values + its own result), so it copies it out to thread 0's
// line. (a) That copy-out lost (pass E + 1 committed by its whole record before its
// pfence): thread 0's result is still in the older record E, recover(0) finds it, and
// recovery copies it out before anything can overwrite record E. (b) Pass E + 2 torn over
// record E (some of its NT-stored words persisted, its check does not match): record E is
// no candidate, and the copy-out, durable since pass E + 1's pfence, answers.
TEST(DpfcStack, ACopyOutLostOrATornOtherRecordKeepsTheLatestResult) {
    fixture f(3);
    {
        auto s = f.create();
        s.push(0, 1);  // pass E: thread 0 inline
        const auto before = pmem::thread_counters();
        s.push(1, 2);  // pass E + 1: redo {1, 2}, thread 1 inline, thread 0 copied out
        const auto d = pmem::thread_counters() - before;
        EXPECT_EQ(d.pwb_lines, 2u) << "value 1's line, the copy-out";
        EXPECT_EQ(d.nt_stores, 8u) << "the record: one line of NT stores";
    }
    auto r = f.r();
    ASSERT_EQ(r.results[0].seq, 1u) << "copied out";
    ASSERT_EQ(r.results[0].epoch, r.state[1 - r.newest()].epoch) << "stamped with the record it came from";
    const auto image = f.buf.snapshot();
    {  // (a)
        r.results[0] = {};
        const auto lost = stk::open(f.buf.data(), f.buf.size());
        const auto got = lost.recover(0);
        EXPECT_EQ(got.seq, 1u);
        EXPECT_TRUE(got.took_effect);
        EXPECT_EQ(got.param, 1u);
        EXPECT_EQ(r.results[0].seq, 1u) << "recovery copied it out";
        EXPECT_EQ(r.committed().inlined(), 0u) << "and committed a record without inline results";
        EXPECT_EQ(lost.unsynchronized_contents(), (std::vector<u64>{2, 1}));
    }
    f.buf.restore(image);
    {  // (b)
        auto& old = r.state[1 - r.newest()];
        old.epoch += 2;  // a torn write: the next pass's epoch and payload, the old check
        old.payload[0] = ~u64{0};
        ASSERT_FALSE(old.whole());
        auto s = f.open();
        EXPECT_EQ(s.recover(0).seq, 1u);
        EXPECT_TRUE(s.recover(0).took_effect);
        EXPECT_EQ(s.recover(1).seq, 1u);
        EXPECT_EQ(s.recover(1).param, 2u);
        EXPECT_EQ(s.unsynchronized_contents(), (std::vector<u64>{2, 1}));
    }
}

// One pass with more results than its record holds, driven through the core: two inline,
// the rest spilled; every outcome detectable, and losing one spilled line uncommits the
// whole pass.
TEST(DpfcStack, APassWithInlineAndSpilledResults) {
    fixture f(4);
    (void)f.create();
    const auto image = f.buf.snapshot();
    using core_t = c::dpfc_core<c::dpfc_lifo>;
    core_t core(f.buf.data(), {}, {});
    std::vector<core_t::slot_type> ops(4);
    ops[0].request = {0, 1, stk::push_op, 10};
    ops[1].request = {1, 1, stk::push_op, 11};
    ops[2].request = {2, 1, stk::push_op, 12};
    ops[3].request = {3, 1, stk::pop_op, 0};
    std::vector<core_t::slot_type*> batch;
    for (auto& o : ops) batch.push_back(&o);
    core.combine(batch);
    EXPECT_EQ(ops[3].response.value, 10u) << "paired with the first push";
    auto r = f.r();
    const auto& st = r.committed();
    EXPECT_EQ(st.redo(), 2u);
    EXPECT_EQ(st.inlined(), 1u) << "2 redo values leave room for one";
    EXPECT_EQ(st.spilled(), 3u);
    for (unsigned t = 0; t < 4; ++t) {
        const auto got = c::dpfc_recovered(f.buf.data(), t);
        EXPECT_EQ(got.seq, 1u) << t;
        EXPECT_TRUE(got.took_effect) << t;
    }
    EXPECT_EQ(c::dpfc_recovered(f.buf.data(), 3).response.value, 10u);
    const auto after = f.buf.snapshot();
    f.buf.restore_range(image, c::dpfc_region::results_offset + 2 * 64, 64);  // thread 2's spilled line lost
    {
        auto s = f.open();
        EXPECT_TRUE(s.unsynchronized_contents().empty()) << "the pass did not commit";
        for (unsigned t = 0; t < 4; ++t) EXPECT_FALSE(s.recover(t).took_effect) << t;
    }
    f.buf.restore(after);
    auto s = f.open();
    EXPECT_EQ(s.unsynchronized_contents(), (std::vector<u64>{12, 11}));
    for (unsigned t = 0; t < 4; ++t) EXPECT_EQ(s.next_seq(t), 2u) << t;
}

TEST(DpfcStack, RecoveryCopiesRedoValuesIntoTheArray) {
    fixture f(1);
    {
        auto s = f.create();
        s.push(0, 41);
        s.push(0, 42);
    }
    auto r = f.r();
    ASSERT_EQ(r.committed().redo(), 2u) << "42, and 41, deferred by the pass before";
    r.elements[0] = 0xdead;  // the elements' stores lost, their record durable
    r.elements[1] = 0xbeef;
    auto s = f.open();
    EXPECT_EQ(s.unsynchronized_contents(), (std::vector<u64>{42, 41}));
    EXPECT_EQ(f.r().committed().redo(), 0u) << "recovery commits the state again without redo";
}

struct damage {
    const char* name;
    void (*apply)(c::dpfc_region);
    bool reseal = true;  // seal the records that were whole again: the damage is in a word's meaning, not a tear
};

TEST(DpfcStack, DamagedRegionsAreRefusedWithNothingWritten) {
    const damage cases[] = {
        {"magic", [](c::dpfc_region r) { r.header->magic ^= 1; }},
        {"threads", [](c::dpfc_region r) { r.header->threads = 0; }},
        {"capacity", [](c::dpfc_region r) { r.header->capacity = u64{1} << 60; }},
        {"element_size", [](c::dpfc_region r) { r.header->element_size = 4; }},
        {"epochs equal", [](c::dpfc_region r) { r.state[0].epoch = r.state[1].epoch; }},
        {"epoch limit", [](c::dpfc_region r) { r.state[r.newest()].epoch = u64{1} << 63; }},
        {"size", [](c::dpfc_region r) { r.state[r.newest()].size_word = 65; }},
        {"redo", [](c::dpfc_region r) { r.state[r.newest()].head_word = u64{5} << 56; }},
        {"head", [](c::dpfc_region r) { r.state[r.newest()].head_word += 1; }},
        {"spilled", [](c::dpfc_region r) { r.state[r.newest()].size_word += u64{3} << 56; }},
        {"result epoch", [](c::dpfc_region r) { r.results[0].epoch = r.state[r.newest()].epoch + 2; }},
        {"result name", [](c::dpfc_region r) { r.results[0].name = 9; }},
        {"result status", [](c::dpfc_region r) { r.results[0].response.status = dfc_status::value; }},
        {"result seq", [](c::dpfc_region r) { r.results[1].param = 5; }},
        {"both records torn", [](c::dpfc_region r) { r.state[0].check ^= 1, r.state[1].check ^= 1; }, false},
        {"committed record torn",
         [](c::dpfc_region r) {
             const auto n = r.newest();
             r.state[1 - n].check ^= 1;  // the newest: uncommitted, as no spill of it is stamped
             r.state[n].size_word |= u64{1} << 56;
             r.state[n].seal();
         },
         false},
        {"inline tid", [](c::dpfc_region r) { r.state[r.newest()].payload[r.state[r.newest()].redo()] |= 0xffff; }},
        {"inline seq", [](c::dpfc_region r) { r.state[r.newest()].payload[r.state[r.newest()].redo()] &= 0x3ffff; }},
        {"inline room", [](c::dpfc_region r) { r.state[r.newest()].head_word |= u64{3} << 59; }},
    };
    for (const auto& k : cases) {
        fixture f(2);
        {
            auto s = f.create();
            s.push(0, 1);
            s.push(0, 2);
        }
        const auto r = f.r();
        const bool whole[2] = {r.state[0].whole(), r.state[1].whole()};
        k.apply(r);
        for (int i = 0; i < 2; ++i)
            if (k.reseal && whole[i]) r.state[i].seal();
        const auto before = f.buf.snapshot();
        try {
            (void)f.open();
            ADD_FAILURE() << k.name << ": accepted";
        } catch (const damaged_pool& e) {
            EXPECT_EQ(e.kind(), pool_errc::damaged_object) << k.name;
            EXPECT_EQ(e.region(), "dpfc_stack") << k.name;
        }
        EXPECT_EQ(std::memcmp(before.data(), f.buf.data(), f.buf.size()), 0) << k.name << ": wrote";
    }
}

TEST(DpfcStack, Format1IsRefusedWithWhatToDoAndNothingWritten) {
    fixture f(2);
    { f.create().push(0, 1); }
    f.r().header->magic = c::dpfc_stack_magic_v1;
    const auto before = f.buf.snapshot();
    try {
        (void)f.open();
        ADD_FAILURE() << "format 1 accepted";
    } catch (const damaged_pool&) {
        ADD_FAILURE() << "format 1 reported as damage";
    } catch (const pool_error& e) {
        EXPECT_EQ(e.kind(), pool_errc::wrong_version);
        EXPECT_NE(std::string(e.what()).find("FrDPFCS1"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("new dpfc_stack"), std::string::npos) << e.what();
    }
    EXPECT_EQ(std::memcmp(before.data(), f.buf.data(), f.buf.size()), 0) << "wrote";
}

TEST(DpfcStack, ConcurrentExactlyOnce) {
    constexpr unsigned threads = 4;
    constexpr u64 ops = 3000;
    fixture f(threads, threads * ops);
    auto s = f.create();
    std::vector<std::vector<u64>> popped(threads);
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t)
        ts.emplace_back([&, t] {
            for (u64 i = 0; i < ops; ++i) {
                ASSERT_TRUE(s.push(t, u64(t) << 32 | i));
                if (i % 3 == 0) continue;
                if (auto v = s.pop(t)) popped[t].push_back(*v);
            }
        });
    for (auto& th : ts) th.join();
    std::vector<u64> all;
    for (auto& p : popped) all.insert(all.end(), p.begin(), p.end());
    for (auto v : s.unsynchronized_contents()) all.push_back(v);
    std::sort(all.begin(), all.end());
    EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "a value popped twice";
    EXPECT_EQ(all.size(), threads * ops) << "a value lost";
    for (unsigned t = 0; t < threads; ++t) EXPECT_EQ(s.next_seq(t), 1 + ops + ops - (ops + 2) / 3);
}

using que = dpfc_queue<u64>;

TEST(DpfcQueue, BehavesLikeAQueueAcrossTheRingsWrap) {
    constexpr u64 cap = 7;  // not a power of two: positions wrap by modulo
    dfc_region_buffer buf(que::required_bytes(1, cap));
    auto q = que::create(buf.data(), buf.size(), 1, cap);
    std::deque<u64> model;
    std::mt19937_64 rng(11);
    for (int i = 0; i < 3000; ++i) {
        if (rng() % 2 == 0) {
            const bool ok = q.enqueue(0, u64(i));
            EXPECT_EQ(ok, model.size() < cap);
            if (ok) model.push_back(u64(i));
        } else {
            const auto v = q.dequeue(0);
            if (model.empty()) {
                EXPECT_FALSE(v);
            } else {
                ASSERT_TRUE(v);
                EXPECT_EQ(*v, model.front());
                model.pop_front();
            }
        }
        if (i % 500 == 0) {
            auto again = que::open(buf.data(), buf.size());  // recovery replays the redo values
            EXPECT_EQ(again.unsynchronized_contents(), std::vector<u64>(model.begin(), model.end()));
        }
    }
    EXPECT_EQ(q.unsynchronized_contents(), std::vector<u64>(model.begin(), model.end()));
    const auto r = q.recover(0);
    EXPECT_EQ(r.seq, 3000u);
    EXPECT_TRUE(r.took_effect);
}

TEST(DpfcQueue, RecoveryCopiesRedoValuesAcrossTheWrap) {
    constexpr u64 cap = 4;
    dfc_region_buffer buf(que::required_bytes(1, cap));
    {
        auto q = que::create(buf.data(), buf.size(), 1, cap);
        for (u64 i = 0; i < 3; ++i) q.enqueue(0, i);
        for (u64 i = 0; i < 3; ++i) EXPECT_EQ(q.dequeue(0), i);
        q.enqueue(0, 10);  // slot 3
        q.enqueue(0, 11);  // slot 0: wrapped
    }
    auto r = c::dpfc_region::at(buf.data(), 1);
    ASSERT_EQ(r.committed().redo(), 2u) << "11, and 10, deferred by the pass before";
    r.elements[3] = 0xbeef;  // both elements' stores lost, across the wrap; their record durable
    r.elements[0] = 0xdead;
    auto q = que::open(buf.data(), buf.size());
    EXPECT_EQ(q.unsynchronized_contents(), (std::vector<u64>{10, 11}));
}

TEST(DpfcQueue, AQueueIsNoStackAndDamageIsRefused) {
    dfc_region_buffer buf(que::required_bytes(2, 8));
    { (void)que::create(buf.data(), buf.size(), 2, 8).enqueue(1, 5); }
    EXPECT_THROW((void)stk::open(buf.data(), buf.size()), damaged_pool);
    auto& newest = c::dpfc_region::at(buf.data(), 2).state[c::dpfc_region::at(buf.data(), 2).newest()];
    newest.head_word = 8;
    newest.seal();
    const auto before = buf.snapshot();
    try {
        (void)que::open(buf.data(), buf.size());
        ADD_FAILURE() << "a head beyond the capacity was accepted";
    } catch (const damaged_pool& e) {
        EXPECT_EQ(e.region(), "dpfc_queue");
        EXPECT_NE(std::string(e.what()).find("head"), std::string::npos) << e.what();
    }
    EXPECT_EQ(std::memcmp(before.data(), buf.data(), buf.size()), 0);
}

TEST(DpfcQueue, ConcurrentExactlyOnceInEachProducersOrder) {
    constexpr unsigned threads = 4;
    constexpr u64 ops = 3000;
    dfc_region_buffer buf(que::required_bytes(threads, 64));
    auto q = que::create(buf.data(), buf.size(), threads, 64);  // small: full and empty both happen
    std::vector<std::vector<u64>> got(threads);
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t)
        ts.emplace_back([&, t] {
            u64 i = 0;
            while (i < ops) {
                if (q.enqueue(t, u64(t) << 32 | i)) ++i;
                if (auto v = q.dequeue(t)) got[t].push_back(*v);
            }
        });
    for (auto& th : ts) th.join();
    while (auto v = q.dequeue(0)) got[0].push_back(*v);
    std::vector<u64> all;
    for (auto& g : got) {
        std::vector<u64> last(threads, 0);  // per producer, the order a consumer saw
        for (auto v : g) {
            const auto p = v >> 32, i = v & 0xffffffff;
            EXPECT_TRUE(i == 0 || i >= last[p]) << "out of order";
            last[p] = i;
        }
        all.insert(all.end(), g.begin(), g.end());
    }
    std::sort(all.begin(), all.end());
    EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "a value dequeued twice";
    EXPECT_EQ(all.size(), threads * ops) << "a value lost";
}

}  // namespace
}  // namespace ferrite
