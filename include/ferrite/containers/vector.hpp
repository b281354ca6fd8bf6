// ferrite/containers/vector.hpp: ferrite::vector<T>, a durably linearizable resizable array
// that many threads use at once (PFC thesis, ch. 5: "a drop-in replacement for std::vector").
//
// Every operation is a request to a flat-combining engine (ferrite/combining): one thread at a
// time, the combiner, serves the pending requests of all threads as one batch on the
// persistent vector (persistent_vector_core.hpp: elimination, one pfence per batch of pushes
// or pops through two state records, swap undo log, growth through the heap with the confirm
// protocol). An operation
// that returned is durable; after a crash, recover() brings the vector back to a state that
// contains every returned operation and each interrupted one entirely or not at all.
//
//   ferrite::vector<std::uint64_t, heap> v = ferrite::vector<std::uint64_t, heap>::create(pool, heap, root.anchor);
//   v.push_back(7);                       // any thread
//   std::optional<std::uint64_t> x = v.pop_back();
//   v.get(3); v.swap(0, 1); v.size(); v.reserve(1 << 20);
//   auto view = v.unsynchronized_view();  // std::span<const T>, single-threaded use only
//
// Engine selectors: use_pfc (publication list: threads may come and go, many instances),
// use_fpfc (the fast variant: a slot per thread id), use_pfc_spin / use_fpfc_spin (pure
// spinning, the thesis's no-futex ablation), use_pfc_not_sticky (the combiner lock goes to
// whoever sees it free: PFC as before issue 23, the no-sticky ablation). The engine is a member (composition), not a base.
//
// Crash consistency: see persistent_vector_core.hpp. recover() must run after the heap's
// recover() and before its finish_recovery() (the vector confirms the blocks it keeps).
// open() and recover() validate the header first (vector_recovery.hpp): a damaged one throws
// damaged_pool (kind damaged_object, region "vector") and the pool is left as it was.
#pragma once

#include <optional>
#include <span>

#include "ferrite/combining/fpfc.hpp"
#include "ferrite/combining/pfc.hpp"
#include "ferrite/containers/combined.hpp"
#include "ferrite/containers/open_checks.hpp"
#include "ferrite/containers/persistent_vector_core.hpp"

namespace ferrite {

namespace containers {
struct use_pfc {
    template <class S>
    using engine = combining::pfc<S>;
};
struct use_fpfc {
    template <class S>
    using engine = combining::fpfc<S>;
};
struct use_pfc_spin {
    template <class S>
    using engine = combining::pfc<S, sync::pure_spin>;
};
struct use_fpfc_spin {
    template <class S>
    using engine = combining::fpfc<S, sync::pure_spin>;
};
struct use_pfc_not_sticky {
    template <class S>
    using engine = combining::pfc<S, sync::not_sticky<sync::spin_then_futex<>>>;
};
}  // namespace containers

template <class T, class Heap, class EngineSelector = containers::use_pfc,
          class Trace = containers::no_trace>
class vector {
    using core = containers::persistent_vector_core<T, Heap, Trace>;
    using request = typename core::request;
    using handle = containers::combined<core, EngineSelector>;

public:
    using value_type = T;
    using size_type = std::uint64_t;

    // Constructors ------------------------------------------------------------------------
    // A new vector whose header offset is stored in `anchor` (a persistent word of yours).
    static vector create(const pmem::pool_ref& pool, Heap& heap, std::uint64_t& anchor,
                         std::size_t initial_capacity = 16, containers::vector_options opts = {},
                         Trace trace = {}) {
        auto* h = core::create(pool, heap, anchor, initial_capacity);
        return vector(pool, heap, h, opts, std::move(trace));
    }
    // The vector `anchor` refers to (after recover() if the pool was not shut down cleanly).
    static vector open(const pmem::pool_ref& pool, Heap& heap, std::uint64_t anchor,
                       containers::vector_options opts = {}, Trace trace = {}) {
        containers::require_changeable(pool, heap, "ferrite::vector::open");
        return vector(pool, heap, core::open(pool, heap, anchor), opts, std::move(trace));
    }
    // After a crash: finish or undo what the interrupted combining pass left (see above).
    static void recover(const pmem::pool_ref& pool, Heap& heap, std::uint64_t anchor) { core::recover(pool, heap, anchor); }

    vector(vector&&) noexcept = default;

    // Element access ----------------------------------------------------------------------
    std::optional<T> get(size_type i) { return value_if(apply({containers::vector_op::get, i, 0, {}})); }

    // Capacity ----------------------------------------------------------------------------
    size_type size() { return apply({containers::vector_op::size, 0, 0, {}}).n; }
    bool empty() { return size() == 0; }
    size_type capacity() { return apply({containers::vector_op::capacity, 0, 0, {}}).n; }
    // reserve and push_back return true, or throw what made the growth fail, having changed
    // nothing: the heap's exception (std::bad_alloc / ferrite::out_of_memory when exhausted,
    // confirm_table_full, usage_error), or ferrite::out_of_memory when the capacity's byte
    // count would overflow (persistent_vector_core.hpp, "Differences").
    bool reserve(size_type n) { return apply({containers::vector_op::reserve, n, 0, {}}).ok; }

    // Modifiers ---------------------------------------------------------------------------
    bool push_back(const T& v) { return apply({containers::vector_op::push_back, 0, 0, v}).ok; }
    std::optional<T> pop_back() { return value_if(apply({containers::vector_op::pop_back, 0, 0, {}})); }
    bool swap(size_type i, size_type j) { return apply({containers::vector_op::swap, i, j, {}}).ok; }

    // Single-threaded use (after recovery, or with no other thread using the vector).
    std::span<const T> unsynchronized_view() const {
        const auto& c = c_.core();
        c.require_open("ferrite::vector::unsynchronized_view");
        return {c.data(), static_cast<std::size_t>(c.size())};
    }
    combining::combining_stats stats() const noexcept { return c_.stats(); }  // combining/stats.hpp
    double mean_batch_size() const noexcept { return c_.mean_batch_size(); }
    Trace& trace() noexcept { return c_.core().trace(); }

private:
    vector(const pmem::pool_ref& pool, Heap& heap, containers::vector_header* h, containers::vector_options opts,
           Trace trace)
        : c_(pool, heap, h, opts, std::move(trace)) {}

    typename core::response apply(const request& r) {
        c_.core().require_open("ferrite::vector");
        return c_.apply(r);
    }
    static auto value_if(const typename core::response& r) { return handle::value_if(r); }

    handle c_;  // the engine, which holds the core
};

}  // namespace ferrite
