// epoch_domain: nothing runs while a thread pinned at retire time stays pinned, everything
// runs after reclaim_all or the destructor, pins nest, a thread's bags pass to the next thread
// with its id, concurrent readers never see a reclaimed node, pending() counts.
#include "ferrite/sync/epoch_domain.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <latch>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "ferrite/error.hpp"
#include "ferrite/sync/thread_id.hpp"

namespace ferrite::sync {
namespace {

// A retired node of the tests: counts how often it was reclaimed and on which thread id.
struct item {
    std::atomic<int> reclaimed{0};
    std::atomic<unsigned> by{~0u};
};

struct counter {
    std::atomic<std::size_t> runs{0};
};

void reclaim_item(void* node, void* context) {
    auto* it = static_cast<item*>(node);
    it->by.store(this_thread_id(), std::memory_order_relaxed);
    it->reclaimed.fetch_add(1, std::memory_order_relaxed);
    static_cast<counter*>(context)->runs.fetch_add(1, std::memory_order_relaxed);
}

void reclaim_nothing(void*, void* context) {
    static_cast<counter*>(context)->runs.fetch_add(1, std::memory_order_relaxed);
}

// One short operation that retires a dummy node: the traffic that makes a thread collect.
void churn(epoch_domain& d, counter& c, int rounds) {
    for (int i = 0; i < rounds; ++i) {
        auto g = d.pin();
        d.retire(nullptr, reclaim_nothing, &c);
    }
}

// Moves a fresh domain's epoch well past 0 (and empties it), so that a test does not pass
// only because every bag tag and epoch is still small.
void advance_a_while(epoch_domain& d) {
    counter c;
    churn(d, c, 64 * 20);
    d.reclaim_all();
}

std::size_t count_reclaimed(const std::vector<item>& items) {
    std::size_t n = 0;
    for (const item& it : items) n += it.reclaimed.load() != 0;
    return n;
}

TEST(EpochDomain, PendingCountsRetiredNodesUntilReclaimAll) {
    epoch_domain d;
    counter c;
    std::vector<item> items(5);
    EXPECT_EQ(d.pending(), 0u);
    {
        auto g = d.pin();
        for (std::size_t i = 0; i < items.size(); ++i) {
            d.retire(&items[i], reclaim_item, &c);
            EXPECT_EQ(d.pending(), i + 1);
        }
    }
    EXPECT_EQ(d.pending(), 5u);  // below every collection threshold: nothing ran yet
    EXPECT_EQ(c.runs.load(), 0u);
    d.reclaim_all();
    EXPECT_EQ(d.pending(), 0u);
    EXPECT_EQ(c.runs.load(), 5u);
    for (const item& it : items) EXPECT_EQ(it.reclaimed.load(), 1);
    d.reclaim_all();  // nothing left: runs nothing twice
    EXPECT_EQ(c.runs.load(), 5u);
}

TEST(EpochDomain, RetireWithoutPinIsAUsageError) {
    epoch_domain d;
    counter c;
    EXPECT_THROW(d.retire(nullptr, reclaim_nothing, &c), usage_error);
    { auto g = d.pin(); }
    EXPECT_THROW(d.retire(nullptr, reclaim_nothing, &c), usage_error);  // unpinned again
    EXPECT_EQ(d.pending(), 0u);
}

// The deterministic core: a reader pins and stays pinned (it waits on a latch, so it runs
// nothing meanwhile); the main thread retires nodes and churns far past every threshold.
// None of those nodes may run until the reader unpins; afterwards the main thread's own
// traffic reclaims all of them, without reclaim_all.
TEST(EpochDomain, NothingRunsWhileAThreadPinnedAtRetireStaysPinned) {
    epoch_domain d;
    advance_a_while(d);
    counter c;
    std::vector<item> items(1000);
    std::latch pinned(1), release(1);
    std::thread reader([&] {
        auto g = d.pin();
        pinned.count_down();
        release.wait();
    });
    pinned.wait();
    for (item& it : items) {
        auto g = d.pin();
        d.retire(&it, reclaim_item, &c);
    }
    churn(d, c, 2000);
    EXPECT_EQ(count_reclaimed(items), 0u) << "a node ran while a thread pinned at its retire was";
    EXPECT_GE(d.pending(), items.size());

    release.count_down();
    reader.join();
    int rounds = 0;
    for (; rounds < 20 && count_reclaimed(items) < items.size(); ++rounds) churn(d, c, 64);
    EXPECT_EQ(count_reclaimed(items), items.size()) << "the epoch did not advance once the reader left";
    for (const item& it : items) {
        EXPECT_EQ(it.reclaimed.load(), 1);
        EXPECT_EQ(it.by.load(), this_thread_id()) << "reclaim runs on the retiring thread";
    }
    d.reclaim_all();
    EXPECT_EQ(d.pending(), 0u);
    EXPECT_EQ(c.runs.load(), items.size() + 2000 + 64u * static_cast<unsigned>(rounds));
}

// The schedule that makes "tag with the retiring thread's epoch, run at + 2" unsafe
// (epoch_domain.hpp, "What differs"): U pins at e; E moves to e + 1; R pins at e + 1 (and
// could read n); U unlinks and retires n (tag e) and unpins; E moves to e + 2; U's next
// collections must still not run n while R stays pinned.
TEST(EpochDomain, AReaderPinnedInALaterEpochThanTheRetirerIsRespected) {
    epoch_domain d;
    advance_a_while(d);
    counter c;
    item n;
    std::latch u_pinned(1), u_go(1), r_pinned(1), r_release(1);
    std::thread u([&] {
        std::optional<epoch_domain::guard> g(d.pin());
        u_pinned.count_down();
        u_go.wait();
        d.retire(&n, reclaim_item, &c);
        g.reset();
        churn(d, c, 2000);  // advances to e + 2, then collects again and again
    });
    u_pinned.wait();
    churn(d, c, 200);  // E: e -> e + 1 (U announced e); U blocks any further advance
    std::thread r([&] {
        auto g = d.pin();
        r_pinned.count_down();
        r_release.wait();
    });
    r_pinned.wait();
    u_go.count_down();
    u.join();
    EXPECT_EQ(n.reclaimed.load(), 0) << "ran while a thread pinned before its unlink still was";
    r_release.count_down();
    r.join();
    d.reclaim_all();
    EXPECT_EQ(n.reclaimed.load(), 1);
}

// One thread alone: every node runs exactly once, the bags are reused across epochs (tags
// wrap mod 4), and what is held back stays bounded (the last epochs' bags, one advance per
// 64 retires).
TEST(EpochDomain, OneThreadReclaimsAsItGoesAndEachNodeOnce) {
    epoch_domain d;
    counter c;
    std::vector<item> items(10000);
    std::size_t most_pending = 0;
    for (item& it : items) {
        {
            auto g = d.pin();
            d.retire(&it, reclaim_item, &c);
        }
        most_pending = std::max(most_pending, d.pending());
    }
    EXPECT_LE(most_pending, 4u * 64u) << "bags beyond the last epochs were kept";
    EXPECT_GE(count_reclaimed(items), items.size() - 4 * 64);
    d.reclaim_all();
    for (const item& it : items) ASSERT_EQ(it.reclaimed.load(), 1);
    EXPECT_EQ(d.pending(), 0u);
}

TEST(EpochDomain, NestedPinsKeepTheThreadPinnedUntilTheOutermostEnds) {
    epoch_domain d;
    advance_a_while(d);
    counter c;
    std::vector<item> items(300);
    std::optional<epoch_domain::guard> outer(d.pin());
    {
        auto inner = d.pin();
        auto innermost = d.pin();
    }
    // Moving a guard moves the pin: the moved-from one unpins nothing.
    std::optional<epoch_domain::guard> moved(std::move(*outer));
    outer.reset();
    std::thread([&] {
        for (item& it : items) {
            auto g = d.pin();
            d.retire(&it, reclaim_item, &c);
        }
        churn(d, c, 1000);
    }).join();
    EXPECT_EQ(count_reclaimed(items), 0u) << "an inner guard or a moved-from guard unpinned";

    moved.reset();  // the outermost: unpins now
    counter dummy;
    EXPECT_THROW(d.retire(nullptr, reclaim_nothing, &dummy), usage_error);
    // The worker's bags stay in its record: the next thread with its id finishes them.
    std::thread([&] {
        for (int round = 0; round < 20 && count_reclaimed(items) < items.size(); ++round)
            churn(d, c, 64);
    }).join();
    EXPECT_EQ(count_reclaimed(items), items.size());
    d.reclaim_all();
}

// A nested pin must not announce the newer epoch: the outer section may hold nodes that only
// its first announcement protects. W pins at E0; E -> E0 + 1; main pins (outer, E0 + 1);
// W retires n (tag E0), unpins and moves E to E0 + 2; main pins again inside (re-announcing
// E0 + 2 would let E reach E0 + 3 and n run); W collects again.
TEST(EpochDomain, ANestedPinKeepsTheOuterAnnouncement) {
    epoch_domain d;
    advance_a_while(d);
    counter c;
    item n;
    std::latch w_pinned(1), w_go(1), w_advanced(1), w_go_again(1);
    std::thread w([&] {
        std::optional<epoch_domain::guard> g(d.pin());
        w_pinned.count_down();
        w_go.wait();
        d.retire(&n, reclaim_item, &c);
        g.reset();
        churn(d, c, 200);
        w_advanced.count_down();
        w_go_again.wait();
        churn(d, c, 2000);
    });
    w_pinned.wait();
    churn(d, c, 200);  // E0 -> E0 + 1, then W blocks
    {
        auto outer = d.pin();
        w_go.count_down();
        w_advanced.wait();
        { auto inner = d.pin(); }
        w_go_again.count_down();
        w.join();
        EXPECT_EQ(n.reclaimed.load(), 0) << "a nested pin moved the outer section's epoch";
    }
    d.reclaim_all();
    EXPECT_EQ(n.reclaimed.load(), 1);
}

TEST(EpochDomain, AnExitedThreadsBagsPassToTheNextThreadWithItsId) {
    epoch_domain d;
    counter c;
    std::vector<item> items(10);
    unsigned first_id = ~0u;
    std::thread([&] {
        first_id = this_thread_id();
        auto g = d.pin();
        for (item& it : items) d.retire(&it, reclaim_item, &c);
    }).join();
    EXPECT_EQ(d.pending(), items.size()) << "bags of an exited thread stay until reused";
    EXPECT_EQ(count_reclaimed(items), 0u);

    unsigned second_id = ~1u;
    std::thread([&] {
        second_id = this_thread_id();
        // Reads only: pins and unpins without retiring; every 64th unpin of a record that
        // holds nodes collects, and with the asymmetric fence every 16th such collect tries
        // to advance (three advances make the bags safe).
        for (int i = 0; i < 64 * 16 * 8 && count_reclaimed(items) < items.size(); ++i) {
            auto g = d.pin();
        }
    }).join();
    ASSERT_EQ(second_id, first_id) << "thread ids are reused (sync/thread_id.hpp)";
    EXPECT_EQ(count_reclaimed(items), items.size());
    for (const item& it : items) EXPECT_EQ(it.by.load(), second_id);
    EXPECT_EQ(d.pending(), 0u);
}

// pin's fast path caches the thread's record keyed by the domain's id: a domain made at the
// address of a destroyed one must not find the destroyed one's record (retire would then
// see its own record unpinned, or pin would write freed memory).
TEST(EpochDomain, ADomainAtADestroyedDomainsAddressGetsItsOwnRecord) {
    alignas(epoch_domain) unsigned char buffer[sizeof(epoch_domain)];
    counter c;
    for (int round = 0; round < 3; ++round) {
        auto* d = new (buffer) epoch_domain;
        {
            auto g = d->pin();
            d->retire(nullptr, reclaim_nothing, &c);
        }
        churn(*d, c, 200);
        d->~epoch_domain();
    }
    EXPECT_EQ(c.runs.load(), 3u * 201u);
}

TEST(EpochDomain, DestructorRunsWhatExitedThreadsLeft) {
    counter c;
    std::vector<item> items(100);
    auto d = std::make_unique<epoch_domain>();
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t)
        ts.emplace_back([&, t] {
            auto g = d->pin();
            for (std::size_t i = t; i < items.size(); i += 4) d->retire(&items[i], reclaim_item, &c);
        });
    for (auto& th : ts) th.join();
    EXPECT_EQ(d->pending() + count_reclaimed(items), items.size());
    d.reset();
    for (const item& it : items) EXPECT_EQ(it.reclaimed.load(), 1);
}

// A reclaim function may pin and retire on the same domain; reclaim_all runs those too.
TEST(EpochDomain, ReclaimFunctionMayRetireAgain) {
    epoch_domain d;
    counter c;
    item second;
    struct chain {
        epoch_domain* d;
        item* next;
        counter* c;
    } link{&d, &second, &c};
    item first;
    {
        auto g = d.pin();
        d.retire(&first, [](void* node, void* context) {
            auto* l = static_cast<chain*>(context);
            reclaim_item(node, l->c);
            auto g2 = l->d->pin();
            l->d->retire(l->next, reclaim_item, l->c);
        }, &link);
    }
    d.reclaim_all();
    EXPECT_EQ(first.reclaimed.load(), 1);
    EXPECT_EQ(second.reclaimed.load(), 1);
    EXPECT_EQ(d.pending(), 0u);
}

// Readers pin, load a shared pointer and check its canary; writers swap in a new object and
// retire the old one, whose reclaim function poisons the canary (and parks the object, so a
// premature reclaim shows as poison rather than only as a use after free; the plain payload
// write makes it a data race for ThreadSanitizer too). Readers keep each object for a while
// and now and then yield while pinned, as a preempted thread would. The writers go on until
// the readers have run many sections alongside them and something was reclaimed meanwhile
// (counts, not time: on a loaded machine either side may be descheduled for long).
TEST(EpochDomain, ReadersNeverSeeAReclaimedObject) {
    constexpr std::uint64_t live = 0x600DF00D600DF00Dull;
    constexpr std::uint64_t poison = 0xDEADBEEFDEADBEEFull;
    struct object {
        std::atomic<std::uint64_t> canary{live};
        std::uint64_t payload = live;
    };
    struct graveyard {
        std::mutex m;
        std::vector<object*> parked;
        std::atomic<std::size_t> count{0};
    } yard;
    const auto bury = [](void* node, void* context) {
        auto* o = static_cast<object*>(node);
        o->canary.store(poison, std::memory_order_relaxed);
        o->payload = poison;
        auto* y = static_cast<graveyard*>(context);
        std::lock_guard lock(y->m);
        y->parked.push_back(o);
        y->count.fetch_add(1, std::memory_order_relaxed);
    };

    constexpr int readers = 2, writers = 2;
    constexpr int min_swaps = 3000;       // per writer
    constexpr int max_swaps = 200000;     // per writer: only if reclamation never happens
    constexpr unsigned min_sections = 400;  // per reader, while the writers run
    epoch_domain d;
    std::atomic<object*> shared{new object};
    std::atomic<int> writers_left{writers};
    std::atomic<unsigned> readers_done{0};  // readers that ran min_sections
    std::atomic<std::size_t> swaps{0};
    std::atomic<std::uint64_t> poisoned_reads{0}, reads{0};
    std::latch start(readers + writers);
    std::vector<std::thread> ts;
    for (int w = 0; w < writers; ++w)
        ts.emplace_back([&] {
            start.arrive_and_wait();
            int i = 0;
            for (; i < max_swaps && (i < min_swaps || readers_done.load() < readers ||
                                     yard.count.load(std::memory_order_relaxed) == 0);
                 ++i) {
                {
                    auto g = d.pin();
                    object* old = shared.exchange(new object, std::memory_order_acq_rel);
                    d.retire(old, bury, &yard);
                }
                if (i % 32 == 31) std::this_thread::yield();  // let the readers run too
            }
            swaps.fetch_add(static_cast<std::size_t>(i));
            writers_left.fetch_sub(1);
        });
    for (int r = 0; r < readers; ++r)
        ts.emplace_back([&] {
            start.arrive_and_wait();
            std::uint64_t bad = 0, n = 0;
            for (unsigned section = 1; writers_left.load() > 0; ++section) {
                {
                    auto g = d.pin();
                    const object* o = shared.load(std::memory_order_acquire);
                    bad += o->payload != live;
                    for (int k = 0; k < 64; ++k) {
                        bad += o->canary.load(std::memory_order_relaxed) != live;
                        ++n;
                    }
                    if (section % 128 == 0) std::this_thread::yield();
                    bad += o->canary.load(std::memory_order_relaxed) != live;
                }
                if (section == min_sections) readers_done.fetch_add(1);
            }
            poisoned_reads.fetch_add(bad);
            reads.fetch_add(n);
        });
    for (auto& th : ts) th.join();

    EXPECT_EQ(poisoned_reads.load(), 0u) << "of " << reads.load() << " reads, " << swaps.load() << " swaps";
    const std::size_t reclaimed_while_running = yard.parked.size();
    EXPECT_GT(reclaimed_while_running, 0u) << "the writers never reclaimed anything while running";
    EXPECT_EQ(d.pending() + reclaimed_while_running, swaps.load()) << "pending() counts what has not run";
    d.reclaim_all();
    EXPECT_EQ(yard.parked.size(), swaps.load());
    for (object* o : yard.parked) delete o;
    delete shared.load();
}

}  // namespace
}  // namespace ferrite::sync
