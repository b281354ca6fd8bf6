// ferrite/combining/pfc.hpp: PFC, persistent flat combining with a publication list.
//
// Algorithm: PFC thesis (Stuttgart 2025), Alg 5.1-5.5. Each thread owns one publication per
// instance, found through a thread-local map (pfc_registry.hpp) and linked into the
// instance's list (lock-free push at the head). REQUEST: write the request, mark it pending,
// MAYBEINSERT (re-link if a cleanup unlinked it), then wait for "my response OR the lock"
// (sync::futex_lock::wait_for). The lock holder increments the pass count, re-links itself,
// combines: walks the list, stamps each pending publication's age (every CleanupEvery-th pass), hands the batch to the
// structure's combine() (eliminate, apply, write back, one pfence pair) and publishes the
// responses. Every CleanupEvery passes it unlinks publications idle for more than MaxAge
// passes, and those of exited threads.
//
// Differences from the thesis: publications are reference-counted between the thread and
// the list, so threads may exit and instances be destroyed in any order (the thesis leaves
// reclamation open); waiting re-links the publication while spinning, and a sleeping waiter
// is woken by every unlock, so a publication unlinked by a cleanup that raced with its new
// request is re-linked before anyone needs it. A sticky combiner (sticky_combiner.hpp, as in
// DFC): a waiter that did not run the last pass leaves a free lock to the thread that did for
// an adaptive number of spins, so that the combiner's lines (lock, list walk, the structure's
// state record) stay in one core; on a 16-core machine without it the lock went from core to
// core and stack-pfc ran at 0.73x dfc-stack at 16 threads (docs/results.md).
//
// Crash consistency: nothing here is persistent (the list is volatile, as in the thesis).
// LP: inside the combiner's pass, where combine() applies the request. PP: combine()
// returns after the batch's pfence, and only then are responses published, so a returned
// operation is durable. Recovery is the structure's alone.
//
//   ferrite::combining::pfc<my_structure> fc(args...);
//   auto r = fc.apply(request);     // any thread, any time
#pragma once

#include <memory>
#include <vector>

#include "ferrite/combining/pfc_registry.hpp"
#include "ferrite/combining/publication.hpp"
#include "ferrite/combining/stats.hpp"
#include "ferrite/combining/sticky_combiner.hpp"
#include "ferrite/combining/structure.hpp"
#include "ferrite/sync/futex_lock.hpp"

namespace ferrite::combining {

template <combinable S, class WaitPolicy = sync::spin_then_futex<>, unsigned CleanupEvery = 64, unsigned MaxAge = 1024>
class pfc {
    static_assert(CleanupEvery > 0 && CleanupEvery < MaxAge, "a publication's age may lag by CleanupEvery passes");

public:
    using request = typename S::request;
    using response = typename S::response;

    template <class... Args>
    explicit pfc(Args&&... args) : structure_(std::forward<Args>(args)...) {}

    ~pfc() {
        // Let go of the list's references; threads drop theirs when they next add an entry
        // or exit. No thread may be inside apply() now.
        for (node* n = head_.load(std::memory_order_acquire); n != nullptr;) {
            node* next = n->next.load(std::memory_order_relaxed);
            n->orphaned.store(true, std::memory_order_release);
            n->release();
            n = next;
        }
    }
    pfc(const pfc&) = delete;
    pfc& operator=(const pfc&) = delete;

    response apply(const request& r) {
        const auto before = pmem::thread_counters();
        pmem::counters in_pass{};  // what this thread's own pass issued, if it combined
        node* mine = my_node();
        mine->pub.op.request = r;
        mine->pub.state.store(pub_state::pending, std::memory_order_release);
        maybe_insert(mine);
        const auto done = [&] {
            if (mine->pub.state.load(std::memory_order_acquire) == pub_state::done) return true;
            maybe_insert(mine);
            return false;
        };
        if constexpr (WaitPolicy::sticky) {
            if (const node* last = last_combiner_.load(std::memory_order_relaxed); last != mine && last != nullptr)
                sticky_combiner::defer_to_last_combiner(lock_, deferral_, done);
        }
        if (lock_.wait_for(done)) {
            if (mine->pub.state.load(std::memory_order_acquire) != pub_state::done) {
                ++passes_;
                maybe_insert(mine);
                in_pass = combine_list();
                if (passes_ % CleanupEvery == 0) cleanup();
                last_combiner_.store(mine, std::memory_order_relaxed);
            }
            lock_.unlock();
        }
        response out = mine->pub.op.response;
        mine->pub.state.store(pub_state::idle, std::memory_order_relaxed);
        stats_.after_operation(pmem::thread_counters() - before, in_pass);
        return out;
    }

    S& structure() noexcept { return structure_; }
    const S& structure() const noexcept { return structure_; }
    // Passes, operations and persistence instructions since construction (stats.hpp).
    combining_stats stats() const noexcept { return stats_.snapshot(); }
    // The sticky combiner's deferral budget (sticky_combiner.hpp; for tests).
    unsigned deferral_budget() const noexcept { return deferral_.load(std::memory_order_relaxed); }
    // Publications linked now (for tests and statistics; exact only while quiescent).
    std::size_t linked_publications() const noexcept {
        std::size_t n = 0;
        for (node* p = head_.load(std::memory_order_acquire); p; p = p->next.load(std::memory_order_acquire)) ++n;
        return n;
    }

private:
    struct node final : pfc_node_base {
        publication<request, response> pub;
        std::atomic<node*> next{nullptr};
        std::atomic<bool> linked{false};
        std::uint64_t age = 0;  // combiner only: a pass that served this publication, at most CleanupEvery - 1 before the last
    };

    node* my_node() {
        if (auto* n = find_thread_node(id_)) return static_cast<node*>(n);
        auto* n = new node;
        add_thread_node(id_, n);
        return n;
    }

    // Link `n` at the head unless it is linked (it may have been unlinked by a cleanup).
    void maybe_insert(node* n) noexcept {
        if (n->linked.load(std::memory_order_acquire)) return;
        n->linked.store(true, std::memory_order_relaxed);
        n->acquire();  // the list's reference
        node* h = head_.load(std::memory_order_relaxed);
        do n->next.store(h, std::memory_order_relaxed);
        while (!head_.compare_exchange_weak(h, n, std::memory_order_release, std::memory_order_relaxed));
    }

    // Returns the pass's persistence instructions.
    pmem::counters combine_list() noexcept {
        batch_.clear();
        ops_.clear();
        for (node* n = head_.load(std::memory_order_acquire); n; n = n->next.load(std::memory_order_acquire)) {
            if (n->pub.state.load(std::memory_order_acquire) != pub_state::pending) continue;
            // The age is refreshed once per CleanupEvery passes, not every pass: `next`,
            // `linked` and `age` share a line that the owner reads while it waits, and a
            // write every pass would pull that line away from it and back each time. A
            // publication may so look up to CleanupEvery passes older than it is: unlinked
            // after MaxAge - CleanupEvery idle passes at the earliest, which costs only a re-link.
            if (passes_ - n->age >= CleanupEvery) n->age = passes_;
            batch_.push_back(n);
            ops_.push_back(&n->pub.op);
        }
        const auto before = pmem::thread_counters();
        structure_.combine(std::span(ops_));  // PP: the batch is durable when this returns
        const auto in_pass = pmem::thread_counters() - before;
        stats_.on_pass(ops_.size(), in_pass);
        for (node* n : batch_) n->pub.state.store(pub_state::done, std::memory_order_release);
        return in_pass;
    }

    // Combiner only: unlink publications idle for MaxAge passes or whose thread exited.
    void cleanup() noexcept {
        node* prev = nullptr;
        for (node* n = head_.load(std::memory_order_acquire); n;) {
            node* next = n->next.load(std::memory_order_acquire);
            const bool stale = n->abandoned.load(std::memory_order_acquire) || passes_ - n->age > MaxAge;
            if (!stale || n->pub.state.load(std::memory_order_acquire) == pub_state::pending) {
                prev = n;
                n = next;
                continue;
            }
            if (prev) {
                prev->next.store(next, std::memory_order_release);
            } else {
                node* expected = n;
                if (!head_.compare_exchange_strong(expected, next, std::memory_order_acq_rel)) {
                    // New publications were pushed in front: find n's predecessor again.
                    prev = head_.load(std::memory_order_acquire);
                    while (prev->next.load(std::memory_order_acquire) != n)
                        prev = prev->next.load(std::memory_order_acquire);
                    prev->next.store(next, std::memory_order_release);
                }
            }
            n->linked.store(false, std::memory_order_release);  // its owner may re-link it
            n->release();                                       // the list's reference
            n = next;
        }
    }

    S structure_;
    const std::uint64_t id_ = next_pfc_instance_id();
    alignas(line) sync::futex_lock<WaitPolicy> lock_;
    alignas(line) std::atomic<node*> head_{nullptr};
    // The sticky combiner (sticky_combiner.hpp): whose publication ran the last pass (only
    // compared, never dereferenced: its thread may have exited), and the deferral budget.
    alignas(line) std::atomic<const node*> last_combiner_{nullptr};
    std::atomic<unsigned> deferral_{sticky_combiner::max_deferral};
    std::uint64_t passes_ = 0;         // combiner only
    std::vector<node*> batch_;         // combiner's scratch
    std::vector<slot<request, response>*> ops_;
    stats_recorder stats_;
};

}  // namespace ferrite::combining
