// ferrite/containers/vector_ops.hpp: the requests a vector's combiner serves, and the
// tracing policy that crash tests use to learn the order in which a combiner applied them.
#pragma once

#include <cstdint>
#include <exception>

#include "ferrite/combining/stats.hpp"

namespace ferrite::containers {

enum class vector_op : std::uint8_t { push_back, pop_back, get, swap, size, capacity, reserve };

template <class T>
struct vector_request {
    vector_op op = vector_op::size;
    std::uint64_t a = 0;  // get/swap: index; reserve: capacity
    std::uint64_t b = 0;  // swap: second index
    T value{};            // push_back
};

template <class T>
struct vector_response {
    bool ok = false;      // pop on empty, get/swap out of range, a failed growth: false
    T value{};            // pop_back, get
    std::uint64_t n = 0;  // size, capacity
    // Set when the operation failed for a reason the caller must see: a push or reserve whose
    // growth the heap refused carries the heap's exception (std::bad_alloc or
    // ferrite::out_of_memory, confirm_table_full, usage_error). The combiner cannot throw into
    // another thread, so it hands the exception over here and the caller's handle rethrows it
    // (containers::combined::apply). Null otherwise.
    std::exception_ptr error{};
};

// The Trace policy is the engines' one vocabulary (combining/stats.hpp: combining_trace):
// applied(request, response) for each request in the order it takes effect, before its
// effect reaches memory, and pass_done() at the end of each pass, when everything applied so
// far is durable. no_trace (the default) records nothing.
using combining::no_trace;

}  // namespace ferrite::containers
