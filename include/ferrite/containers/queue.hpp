// ferrite/containers/queue.hpp: ferrite::queue<T>, a durably linearizable FIFO queue for many
// threads: an adapter over ferrite::deque (deque.hpp), as std::queue is over std::deque:
// push = push_back, pop = pop_front.
//
// Algorithm, engines and costs: those of the deque (persistent_deque_core.hpp). A queue's
// pushes and pops meet at opposite ends, so the deque's per-side elimination never pairs
// them; instead a pop that takes a value pushed in the same combining pass is served from
// the request, and that value is never written (on an empty queue a pass of matched
// enqueues and dequeues then costs no persistence instruction at all).
//
//   using q = ferrite::queue<std::uint64_t, ferrite::alloc::buddy_heap>;
//   q jobs = q::create(pool, heap, root.anchor);
//   jobs.push(42);                                 // any thread
//   std::optional<std::uint64_t> j = jobs.pop();   // nullopt if empty
//
// Crash consistency: the deque's; a queue is stored as a deque (a queue and a deque of the
// same element type may open each other's anchor). recover() runs after the heap's
// recover() and before its finish_recovery(). open() and recover() validate the header as
// the deque's do (damaged_pool, region "deque"; nothing written).
#pragma once

#include "ferrite/containers/deque.hpp"

namespace ferrite {

template <class T, class Heap, class EngineSelector = containers::use_pfc,
          class Trace = containers::no_trace>
class queue {
    using container = deque<T, Heap, EngineSelector, Trace>;

public:
    using value_type = T;
    using size_type = std::uint64_t;

    // Constructors ------------------------------------------------------------------------
    static queue create(const pmem::pool_ref& pool, Heap& heap, std::uint64_t& anchor, std::size_t initial_capacity = 16,
                        containers::deque_options opts = {}, Trace trace = {}) {
        return queue(container::create(pool, heap, anchor, initial_capacity, opts, std::move(trace)));
    }
    static queue open(const pmem::pool_ref& pool, Heap& heap, std::uint64_t anchor, containers::deque_options opts = {},
                      Trace trace = {}) {
        return queue(container::open(pool, heap, anchor, opts, std::move(trace)));
    }
    static void recover(const pmem::pool_ref& pool, Heap& heap, std::uint64_t anchor) { container::recover(pool, heap, anchor); }

    queue(queue&&) noexcept = default;

    // Element access ----------------------------------------------------------------------
    std::optional<T> front() { return d_.front(); }  // the next to be popped
    std::optional<T> back() { return d_.back(); }    // the last pushed

    // Capacity ----------------------------------------------------------------------------
    size_type size() { return d_.size(); }
    bool empty() { return d_.empty(); }
    bool reserve(size_type n) { return d_.reserve(n); }  // grow ahead of time (throws as push)

    // Modifiers ---------------------------------------------------------------------------
    bool push(const T& v) { return d_.push_back(v); }      // true, or throws the heap's exception
    std::optional<T> pop() { return d_.pop_front(); }      // nullopt: empty

    // Single-threaded use: the elements, front (next to pop) to back.
    std::vector<T> unsynchronized_contents() const { return d_.unsynchronized_contents(); }
    combining::combining_stats stats() const noexcept { return d_.stats(); }  // combining/stats.hpp
    double mean_batch_size() const noexcept { return d_.mean_batch_size(); }
    Trace& trace() noexcept { return d_.trace(); }

private:
    explicit queue(container d) : d_(std::move(d)) {}
    container d_;
};

}  // namespace ferrite
