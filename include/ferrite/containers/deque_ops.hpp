// ferrite/containers/deque_ops.hpp: the requests a deque's combiner serves (ferrite::deque,
// ferrite::queue). Tracing uses the vector's policy (vector_ops.hpp: no_trace).
#pragma once

#include <cstdint>
#include <exception>

namespace ferrite::containers {

// The four modifiers come first: the combiner sorts them into lists indexed by this value.
enum class deque_op : std::uint8_t { push_back, pop_back, push_front, pop_front, front, back, size, reserve };

template <class T>
struct deque_request {
    deque_op op = deque_op::size;
    T value{};             // push_back, push_front
    std::uint64_t n = 0;   // reserve: capacity
};

template <class T>
struct deque_response {
    bool ok = false;      // pop / front / back on empty, a push or reserve whose growth failed: false
    T value{};            // pops, front, back
    std::uint64_t n = 0;  // size; reserve: the capacity now
    // A push or reserve whose growth the heap refused: the heap's exception, rethrown in the
    // caller's thread by containers::combined::apply (as vector_response::error). Else null.
    std::exception_ptr error{};
};

}  // namespace ferrite::containers
