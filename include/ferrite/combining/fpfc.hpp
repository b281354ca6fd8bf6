// ferrite/combining/fpfc.hpp: FPFC, the fast variant of persistent flat combining.
//
// Algorithm: flat combining (Hendler, Incze, Shavit, Tzafrir, SPAA 2010) with the
// publication records in DRAM and only the combiner touching persistent memory (PFC thesis,
// Stuttgart 2025, ch. 5: "FPFC", L893). A thread publishes its request in its own slot of a
// fixed array indexed by a dense thread id (sync/thread_id.hpp), then either sees its
// response appear or takes the futex lock (sync/futex_lock.hpp) and combines: it collects
// every pending slot, lets the structure combine the batch (which makes it durable with one
// fence pair), and publishes the responses.
//
// Differences from the thesis: the slot array is sized for sync::max_thread_ids and scanned
// up to the ids' high-water mark, so threads may come and go (ids are reused); the wait is
// the same spin-then-futex but expressed as "my result OR the lock" (futex_lock::wait_for).
//
// Crash consistency: nothing here is persistent. A request is linearized inside the
// combiner's pass (LP: where combine() applies it), and its response is published only after
// combine() returned, i.e. after the batch's pfence (PP): a thread that returns has a
// durable effect. Recovery is the structure's alone.
//
//   ferrite::combining::fpfc<my_structure> fc(args...);
//   auto r = fc.apply(request);
#pragma once

#include <memory>
#include <vector>

#include "ferrite/combining/publication.hpp"
#include "ferrite/combining/stats.hpp"
#include "ferrite/combining/structure.hpp"
#include "ferrite/sync/futex_lock.hpp"
#include "ferrite/sync/thread_id.hpp"

namespace ferrite::combining {

template <combinable S, class WaitPolicy = sync::spin_then_futex<>>
class fpfc {
public:
    using request = typename S::request;
    using response = typename S::response;

    template <class... Args>
    explicit fpfc(Args&&... args)
        : structure_(std::forward<Args>(args)...),
          pubs_(std::make_unique<publication<request, response>[]>(sync::max_thread_ids)) {
        batch_.reserve(sync::max_thread_ids);
        ops_.reserve(sync::max_thread_ids);
    }

    response apply(const request& r) {
        const auto before = pmem::thread_counters();
        pmem::counters in_pass{};  // what this thread's own pass issued, if it combined
        auto& mine = pubs_[sync::this_thread_id()];
        mine.op.request = r;
        mine.state.store(pub_state::pending, std::memory_order_release);
        const auto done = [&] { return mine.state.load(std::memory_order_acquire) == pub_state::done; };
        if (lock_.wait_for(done)) {
            if (!done()) in_pass = combine_all();
            lock_.unlock();
        }
        response out = mine.op.response;
        mine.state.store(pub_state::idle, std::memory_order_relaxed);
        stats_.after_operation(pmem::thread_counters() - before, in_pass);
        return out;
    }

    S& structure() noexcept { return structure_; }
    const S& structure() const noexcept { return structure_; }
    // Passes, operations and persistence instructions since construction (stats.hpp).
    combining_stats stats() const noexcept { return stats_.snapshot(); }

private:
    // Returns the pass's persistence instructions.
    pmem::counters combine_all() noexcept {
        batch_.clear();
        const unsigned n = sync::thread_id_high_water();
        for (unsigned i = 0; i < n; ++i)
            if (pubs_[i].state.load(std::memory_order_acquire) == pub_state::pending)
                batch_.push_back(&pubs_[i]);
        ops_.clear();
        for (auto* p : batch_) ops_.push_back(&p->op);
        const auto before = pmem::thread_counters();
        structure_.combine(std::span(ops_));  // PP: the batch is durable when this returns
        const auto in_pass = pmem::thread_counters() - before;
        stats_.on_pass(ops_.size(), in_pass);
        for (auto* p : batch_) p->state.store(pub_state::done, std::memory_order_release);
        return in_pass;
    }

    S structure_;
    alignas(line) sync::futex_lock<WaitPolicy> lock_;
    std::unique_ptr<publication<request, response>[]> pubs_;
    std::vector<publication<request, response>*> batch_;  // combiner's scratch
    std::vector<slot<request, response>*> ops_;           // combiner's scratch
    stats_recorder stats_;
};

}  // namespace ferrite::combining
