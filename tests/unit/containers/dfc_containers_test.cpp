// ferrite::dfc_stack / dfc_queue / dfc_deque: semantics against std models, regression tests
// for the defects of the papers' queue and deque pseudocode (docs/references.md, DFC defects #3-#9),
// recovery after simulated crashes (images built from a snapshot and the region after a
// phase), and multi-threaded stress under both wait policies.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <thread>

#include "dfc_test_support.hpp"
#include "ferrite/containers/dfc_deque.hpp"
#include "ferrite/containers/dfc_queue.hpp"
#include "ferrite/containers/dfc_stack.hpp"

namespace ferrite {
namespace {

using combining::dfc_status;
using ferrite_test::announce_raw;
using ferrite_test::dfc_region_buffer;
using u64 = std::uint64_t;
using stack = dfc_stack<u64>;
using queue = dfc_queue<u64>;
using deque = dfc_deque<u64>;
constexpr unsigned threads = 4;

template <class C>
struct region_for {
    dfc_region_buffer buf{C::required_bytes(threads, 4096)};
    combining::dfc_region layout() { return buf.layout(threads); }
    C create(combining::dfc_options o = {}) { return C::create(buf.data(), buf.size(), threads, o); }
    C reopen() {
        auto c = C::open(buf.data(), buf.size());
        c.recover();
        return c;
    }
};

// ---- semantics against std models ----------------------------------------------------

TEST(DfcStack, BehavesLikeAStdStackWithAndWithoutElimination) {
    for (bool elim : {true, false}) {
        region_for<stack> r;
        auto s = r.create({elim});
        std::vector<u64> model;
        std::mt19937_64 rng(elim);
        for (int i = 0; i < 2000; ++i) {
            if (rng() % 3) {
                ASSERT_TRUE(s.push(i % threads, i));
                model.push_back(i);
            } else {
                const auto got = s.pop(i % threads);
                if (model.empty()) {
                    ASSERT_FALSE(got);
                } else {
                    ASSERT_EQ(got, model.back());
                    model.pop_back();
                }
            }
        }
        auto c = s.unsynchronized_contents();
        EXPECT_TRUE(std::equal(c.begin(), c.end(), model.rbegin(), model.rend()));
        EXPECT_EQ(s.engine().nodes_in_use(), model.size());
    }
}

TEST(DfcStack, FullPoolMakesPushFailWithoutEffect) {
    dfc_region_buffer buf(stack::required_bytes(1, 3));
    auto s = stack::create(buf.data(), buf.size(), 1);
    ASSERT_EQ(s.engine().capacity(), 3u);
    EXPECT_TRUE(s.push(0, 1) && s.push(0, 2) && s.push(0, 3));
    EXPECT_FALSE(s.push(0, 4));
    EXPECT_EQ(s.recover(0).response.status, dfc_status::full);
    EXPECT_EQ(s.pop(0), 3u);
    EXPECT_TRUE(s.push(0, 5)) << "a freed node is reusable after its phase";
}

TEST(DfcContainers, ThreadIdOutOfRangeIsRefusedAndChangesNothing) {
    region_for<stack> r;
    auto s = r.create();
    ASSERT_TRUE(s.push(0, 1));
    const auto before = r.buf.snapshot();
    EXPECT_THROW(s.push(threads, 2), usage_error);
    EXPECT_THROW(s.pop(threads + 7), usage_error);
    EXPECT_THROW((void)s.recover(threads), usage_error);
    EXPECT_THROW((void)s.next_seq(threads), usage_error);
    EXPECT_EQ(std::memcmp(before.data(), r.buf.data(), r.buf.size()), 0) << "a refused operation wrote to the region";
    region_for<deque> rd;
    auto d = rd.create();
    EXPECT_THROW(d.push_front(threads, 1), usage_error);
    region_for<queue> rq;
    auto q = rq.create();
    EXPECT_THROW(q.enqueue(threads, 1), usage_error);
    EXPECT_EQ(s.pop(0), 1u);
}

TEST(DfcQueue, BehavesLikeAStdQueue) {
    region_for<queue> r;
    auto q = r.create();
    std::deque<u64> model;
    std::mt19937_64 rng(3);
    for (int i = 0; i < 2000; ++i) {
        if (rng() % 3) {
            ASSERT_TRUE(q.enqueue(i % threads, i));
            model.push_back(i);
        } else {
            const auto got = q.dequeue(i % threads);
            if (model.empty()) {
                ASSERT_FALSE(got);
            } else {
                ASSERT_EQ(got, model.front());
                model.pop_front();
            }
        }
    }
    auto c = q.unsynchronized_contents();
    EXPECT_TRUE(std::equal(c.begin(), c.end(), model.begin(), model.end()));
}

TEST(DfcDeque, BehavesLikeAStdDequeWithAndWithoutElimination) {
    for (bool elim : {true, false}) {
        region_for<deque> r;
        auto d = r.create({elim});
        std::deque<u64> model;
        std::mt19937_64 rng(5 + elim);
        for (int i = 0; i < 3000; ++i) {
            const unsigned t = i % threads;
            switch (rng() % 5) {
                case 0: ASSERT_TRUE(d.push_front(t, i)); model.push_front(i); break;
                case 1: ASSERT_TRUE(d.push_back(t, i)); model.push_back(i); break;
                case 2: {
                    auto got = d.pop_front(t);
                    if (model.empty()) { ASSERT_FALSE(got); break; }
                    ASSERT_EQ(got, model.front());
                    model.pop_front();
                    break;
                }
                default: {
                    auto got = d.pop_back(t);
                    if (model.empty()) { ASSERT_FALSE(got); break; }
                    ASSERT_EQ(got, model.back());
                    model.pop_back();
                    break;
                }
            }
            ASSERT_EQ(d.unsynchronized_check(), "") << "after op " << i;
        }
        auto c = d.unsynchronized_contents();
        EXPECT_TRUE(std::equal(c.begin(), c.end(), model.begin(), model.end()));
    }
}

// ---- defects of 004's pseudocode ----------------------------------------------------

// #3: Collect returned the last index, Combine used it as a count: a lone enqueue was lost.
TEST(DfcQueue, LoneEnqueueIsApplied) {
    region_for<queue> r;
    auto q = r.create();
    ASSERT_TRUE(q.enqueue(0, 42));  // a phase with exactly one operation
    EXPECT_EQ(q.unsynchronized_contents(), std::vector<u64>{42});
    EXPECT_EQ(q.dequeue(1), 42u);
}

// #4: enqueue must link tail.next := node (head := node when empty) and write the old tail
// back; recovery must find every element from head to tail.
TEST(DfcQueue, EnqueueLinksTheOldTailAcrossPhasesAndRestarts) {
    region_for<queue> r;
    {
        auto q = r.create();
        for (u64 v = 1; v <= 5; ++v) ASSERT_TRUE(q.enqueue(v % threads, v));  // 5 phases
    }
    auto q = r.reopen();
    EXPECT_EQ(q.unsynchronized_contents(), (std::vector<u64>{1, 2, 3, 4, 5}));
    for (u64 v = 1; v <= 5; ++v) EXPECT_EQ(q.dequeue(0), v);
    EXPECT_FALSE(q.dequeue(0));
    ASSERT_TRUE(q.enqueue(0, 9)) << "empty again: head := node";
    EXPECT_EQ(q.unsynchronized_contents(), std::vector<u64>{9});
}

// #8: a crashed phase linked the committed tail in place; recovery ignores and clears it.
TEST(DfcQueue, RecoveryRepairsATailLinkedByACrashedPhase) {
    region_for<queue> r;
    auto lay = r.layout();
    std::vector<ferrite_test::cache_line> before;
    {
        auto q = r.create();
        ASSERT_TRUE(q.enqueue(0, 1));
        ASSERT_TRUE(q.enqueue(0, 2));
        before = r.buf.snapshot();
        ASSERT_TRUE(q.enqueue(1, 3));  // writes node(2).next in place
    }
    // Crash image: everything of the last phase persisted except its commit and the new
    // node's announcement (so recovery does not re-execute it).
    r.buf.restore_range(before, r.buf.offset_of(lay.epoch), 64);
    r.buf.restore_range(before, r.buf.offset_of(&lay.threads[1]), sizeof(combining::dfc_thread_record));
    auto q = r.reopen();
    EXPECT_EQ(q.unsynchronized_contents(), (std::vector<u64>{1, 2}));
    const auto tail = q.engine().root(1);
    EXPECT_EQ(q.engine().node(tail).next, 0u) << "recovery clears the committed tail's next";
    EXPECT_EQ(q.engine().nodes_in_use(), 2u) << "the crashed phase's node is garbage-collected";
    ASSERT_TRUE(q.enqueue(2, 4));
    EXPECT_EQ(q.unsynchronized_contents(), (std::vector<u64>{1, 2, 4}));
}

// #5: pushFront must set head.prev := node (and pushRear write node.prev before the node is
// written back): pop_back must walk prev links that push_front made.
TEST(DfcDeque, PushFrontLinksPrevSoPopBackWalksIt) {
    region_for<deque> r;
    {
        auto d = r.create();
        for (u64 v = 1; v <= 4; ++v) ASSERT_TRUE(d.push_front(0, v));  // 4 3 2 1
    }
    auto d = r.reopen();
    EXPECT_EQ(d.unsynchronized_check(), "");
    for (u64 v = 1; v <= 4; ++v) EXPECT_EQ(d.pop_back(1), v);
    EXPECT_FALSE(d.pop_back(1));
}

// #6: popRear must free the popped tail and commit tail := its prev (not head).
TEST(DfcDeque, PopBackMovesTheTailNotTheHead) {
    region_for<deque> r;
    auto d = r.create();
    for (u64 v = 1; v <= 3; ++v) ASSERT_TRUE(d.push_back(0, v));
    EXPECT_EQ(d.pop_back(0), 3u);
    EXPECT_EQ(d.engine().nodes_in_use(), 2u) << "the popped node is freed";
    auto again = r.reopen();
    EXPECT_EQ(again.unsynchronized_contents(), (std::vector<u64>{1, 2}));
    EXPECT_EQ(again.pop_back(0), 2u);
    EXPECT_EQ(again.pop_front(0), 1u);
}

// #7: Reduce's counters started at -1 (a phantom surplus pop on an empty side) and it
// returned (Rear, Front) swapped. One phase with a push on each side only.
TEST(DfcDeque, OneSidedPhasesHaveNoPhantomOperations) {
    region_for<deque> r;
    auto lay = r.layout();
    auto d = r.create();
    ASSERT_TRUE(d.push_back(0, 10));
    announce_raw(lay, 1, deque::push_front_op, 1);
    announce_raw(lay, 2, deque::push_back_op, 2);
    ASSERT_TRUE(d.push_back(0, 11));  // one phase: front push, two rear pushes (thread order)
    EXPECT_EQ(d.unsynchronized_contents(), (std::vector<u64>{1, 10, 11, 2}));
    EXPECT_EQ(d.unsynchronized_check(), "");
}

// #9: a node freed by pop_front must not be reused by push_back in the same phase: a crash
// before the commit would find the committed version's node overwritten.
TEST(DfcDeque, NodeFreedInAPhaseIsNotReusedBeforeItsCommit) {
    region_for<deque> r;
    auto lay = r.layout();
    std::vector<ferrite_test::cache_line> before;
    u64 old_node = 0;
    {
        auto d = r.create();
        ASSERT_TRUE(d.push_back(0, 7));
        old_node = d.engine().root(0);
        before = r.buf.snapshot();
        announce_raw(lay, 1, deque::pop_front_op, 0);
        ASSERT_TRUE(d.push_back(0, 8));  // one phase: pop_front (frees 7's node), push_back
        EXPECT_NE(d.engine().root(1), old_node) << "push_back reused the node freed in its own phase";
        EXPECT_EQ(d.unsynchronized_contents(), std::vector<u64>{8});
    }
    // Crash image: the phase's node writes persisted, its commit did not.
    r.buf.restore_range(before, r.buf.offset_of(lay.epoch), 64);
    auto d = r.reopen();
    const auto popped = d.recover(1);
    ASSERT_TRUE(popped.took_effect);
    EXPECT_EQ(popped.response.value, 7u) << "the committed node was corrupted";
    EXPECT_EQ(d.unsynchronized_contents(), std::vector<u64>{8});
}

// Stack elimination: a push and a pop of one phase never touch the list.
TEST(DfcStack, EliminationPairsPushWithPop) {
    region_for<stack> r;
    auto lay = r.layout();
    auto s = r.create();
    ASSERT_TRUE(s.push(0, 1));
    const auto nodes = s.engine().nodes_in_use();
    announce_raw(lay, 1, stack::pop_op, 0);
    ASSERT_TRUE(s.push(0, 2));
    EXPECT_EQ(s.recover(1).response.value, 2u) << "the pop got the eliminated push's value";
    EXPECT_EQ(s.engine().nodes_in_use(), nodes);
    EXPECT_EQ(s.unsynchronized_contents(), std::vector<u64>{1});
}

// ---- multi-threaded stress -----------------------------------------------------------

template <class C, class Push, class Pop>
void stress(C& c, unsigned n_threads, int ops, Push push, Pop pop) {
    std::vector<std::vector<u64>> popped(n_threads);
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < n_threads; ++t)
        ts.emplace_back([&, t] {
            std::mt19937_64 rng(t);
            for (int i = 0; i < ops; ++i) {
                if (rng() % 2) {
                    ASSERT_TRUE(push(c, t, u64{t} << 32 | static_cast<u64>(i)));
                } else if (auto v = pop(c, t, rng())) {
                    popped[t].push_back(*v);
                }
            }
        });
    for (auto& th : ts) th.join();
    std::map<u64, int> seen;
    for (auto& p : popped)
        for (u64 v : p) ++seen[v];
    for (u64 v : c.unsynchronized_contents()) ++seen[v];
    std::size_t pushes = 0;
    for (unsigned t = 0; t < n_threads; ++t) {
        std::mt19937_64 rng(t);
        for (int i = 0; i < ops; ++i) {
            if (rng() % 2) {
                ++pushes;
                EXPECT_EQ(seen[u64{t} << 32 | static_cast<u64>(i)], 1) << "value lost or duplicated";
            } else {
                (void)rng();
            }
        }
        EXPECT_EQ(c.recover(t).seq, static_cast<u64>(ops)) << "thread " << t;
    }
    EXPECT_EQ(seen.size(), pushes) << "a value nobody pushed";
}

template <class C, class Push, class Pop>
void stress_all(Push push, Pop pop) {
    constexpr unsigned n = 8;  // more threads than this machine's cores: futex waiting
    dfc_region_buffer buf(C::required_bytes(n, 20000));
    {
        auto c = C::create(buf.data(), buf.size(), n);
        stress(c, n, 2000, push, pop);
    }
    using spin = typename C::template rebind_wait<sync::pure_spin>;
    auto c = spin::create(buf.data(), buf.size(), n);
    stress(c, 4, 1000, push, pop);
}

TEST(DfcStress, StackConservesValues) {
    stress_all<stack>([](auto& s, unsigned t, u64 v) { return s.push(t, v); },
                      [](auto& s, unsigned t, u64) { return s.pop(t); });
}
TEST(DfcStress, QueueConservesValues) {
    stress_all<queue>([](auto& q, unsigned t, u64 v) { return q.enqueue(t, v); },
                      [](auto& q, unsigned t, u64) { return q.dequeue(t); });
}
TEST(DfcStress, DequeConservesValuesAndLinks) {
    stress_all<deque>([](auto& d, unsigned t, u64 v) { return v % 2 ? d.push_front(t, v) : d.push_back(t, v); },
                      [](auto& d, unsigned t, u64 r) { return r % 4 < 2 ? d.pop_front(t) : d.pop_back(t); });
}

}  // namespace
}  // namespace ferrite
