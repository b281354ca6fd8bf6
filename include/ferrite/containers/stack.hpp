// ferrite/containers/stack.hpp: ferrite::stack<T>, a durably linearizable LIFO stack for many
// threads: an adapter over the persistent vector (persistent_vector_core.hpp), as std::stack
// is over a sequence container: push = push_back, pop = pop_back, top = the last element.
//
// Algorithm: PFC (PFC thesis, Stuttgart 2025, ch. 5); the thesis's push-pop benchmark *is* a
// stack workload on its vector, so the stack inherits everything from the vector core:
// push/pop elimination inside a combining pass (a matched pair never touches persistent
// memory), one pfence per batch of pushes (up to 5 of 8 bytes: their values ride in the
// state record; two past that) and per batch of pops, growth through the heap's confirm
// protocol. The guarantee is durable linearizability, not detectability.
//
// Differences from a plain ferrite::vector: the engine drives a thin wrapper (stack_core)
// that adds one request, top, answered from the state at the start of the pass like the
// vector's get (a top computed as size() then get(size-1) would not be atomic). The wrapper
// rewrites top as get(size - 1) before handing the batch to the vector core, so the core and
// its trace are the vector's unchanged. The vector's swap/get/reserve are not offered.
//
//   using st = ferrite::stack<std::uint64_t, ferrite::alloc::buddy_heap>;
//   st s = st::create(pool, heap, root.anchor);
//   s.push(7);                                    // any thread
//   std::optional<std::uint64_t> x = s.pop();     // nullopt if empty
//   s.top(); s.size();
//
// Crash consistency: the vector core's (persistent_vector_core.hpp); a stack is stored as a
// vector (a stack and a vector of the same element type may open each other's anchor).
// recover() runs after the heap's recover() and before its finish_recovery(). open() and
// recover() validate the header as the vector's do (validate_vector, vector_recovery.hpp):
// damage throws damaged_pool (region "vector") before anything is written.
#pragma once

#include <limits>
#include <memory>
#include <optional>
#include <span>

#include "ferrite/containers/open_checks.hpp"
#include "ferrite/containers/vector.hpp"

namespace ferrite {

namespace containers {

// The vector core plus `top` (a get whose index is top_index), for the combining engine.
template <class T, class Heap, class Trace = no_trace>
class stack_core {
    using vector_core = persistent_vector_core<T, Heap, Trace>;

public:
    using request = typename vector_core::request;
    using response = typename vector_core::response;
    using slot_type = typename vector_core::slot_type;
    static constexpr std::uint64_t top_index = std::numeric_limits<std::uint64_t>::max();

    // The vector core's storage: create / open / recover are its own.
    static vector_header* create(const pmem::pool_ref& pool, Heap& heap, std::uint64_t& anchor, std::size_t initial_capacity = 16) {
        return vector_core::create(pool, heap, anchor, initial_capacity);
    }
    static vector_header* open(const pmem::pool_ref& pool, const Heap& heap, std::uint64_t anchor) {
        return vector_core::open(pool, heap, anchor);
    }
    static void recover(const pmem::pool_ref& pool, Heap& heap, std::uint64_t anchor) { vector_core::recover(pool, heap, anchor); }

    stack_core(const pmem::pool_ref& pool, Heap& heap, vector_header* h, vector_options opts = {}, Trace trace = {})
        : core_(pool, heap, h, opts, std::move(trace)) {}

    void combine(std::span<slot_type*> batch) noexcept {
        const auto size = core_.size();
        for (auto* s : batch)  // gets are answered from the state at the start of the pass
            if (s->request.op == vector_op::get && s->request.a == top_index && size > 0) s->request.a = size - 1;
        core_.combine(batch);
    }

    const vector_core& core() const noexcept { return core_; }
    Trace& trace() noexcept { return core_.trace(); }
    void require_open(const char* what) const { core_.require_open(what); }

private:
    vector_core core_;
};

}  // namespace containers

template <class T, class Heap, class EngineSelector = containers::use_pfc,
          class Trace = containers::no_trace>
class stack {
    using core = containers::stack_core<T, Heap, Trace>;
    using request = typename core::request;
    using handle = containers::combined<core, EngineSelector>;
    using op = containers::vector_op;

public:
    using value_type = T;
    using size_type = std::uint64_t;

    // Constructors (the signatures of ferrite::vector's) ----------------------------------
    static stack create(const pmem::pool_ref& pool, Heap& heap, std::uint64_t& anchor, std::size_t initial_capacity = 16,
                        containers::vector_options opts = {}, Trace trace = {}) {
        auto* h = core::create(pool, heap, anchor, initial_capacity);
        return stack(pool, heap, h, opts, std::move(trace));
    }
    static stack open(const pmem::pool_ref& pool, Heap& heap, std::uint64_t anchor, containers::vector_options opts = {},
                      Trace trace = {}) {
        containers::require_changeable(pool, heap, "ferrite::stack::open");
        return stack(pool, heap, core::open(pool, heap, anchor), opts, std::move(trace));
    }
    static void recover(const pmem::pool_ref& pool, Heap& heap, std::uint64_t anchor) { core::recover(pool, heap, anchor); }

    stack(stack&&) noexcept = default;

    // Element access ----------------------------------------------------------------------
    std::optional<T> top() { return value_if(apply({op::get, core::top_index, 0, {}})); }

    // Capacity ----------------------------------------------------------------------------
    size_type size() { return apply({op::size, 0, 0, {}}).n; }
    bool empty() { return size() == 0; }

    // Modifiers ---------------------------------------------------------------------------
    // True; throws the heap's exception (std::bad_alloc, ...) if the growth it needs fails,
    // leaving the stack unchanged.
    bool push(const T& v) { return apply({op::push_back, 0, 0, v}).ok; }
    std::optional<T> pop() { return value_if(apply({op::pop_back, 0, 0, {}})); }

    // Single-threaded use: the elements, bottom to top.
    std::span<const T> unsynchronized_view() const {
        c_.core().require_open("ferrite::stack::unsynchronized_view");
        const auto& c = c_.core().core();
        return {c.data(), static_cast<std::size_t>(c.size())};
    }
    combining::combining_stats stats() const noexcept { return c_.stats(); }  // combining/stats.hpp
    double mean_batch_size() const noexcept { return c_.mean_batch_size(); }
    Trace& trace() noexcept { return c_.core().trace(); }

private:
    stack(const pmem::pool_ref& pool, Heap& heap, containers::vector_header* h, containers::vector_options opts, Trace trace)
        : c_(pool, heap, h, opts, std::move(trace)) {}

    typename core::response apply(const request& r) {
        c_.core().require_open("ferrite::stack");
        return c_.apply(r);
    }
    static auto value_if(const typename core::response& r) { return handle::value_if(r); }

    handle c_;  // the engine, which holds the core
};

}  // namespace ferrite
