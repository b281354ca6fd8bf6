// crash/containers/vector_model.hpp: the trace entry and the sequential specification of the
// vector core's requests, for the targets of the structures built on it (vector-*, stack-*).
#pragma once

#include <vector>

#include "container_target.hpp"
#include "ferrite/containers/vector_layout.hpp"
#include "ferrite/containers/vector_ops.hpp"

namespace ferrite::crash::container_check {

struct vector_entry {
    containers::vector_op op{};
    std::uint64_t a = 0, b = 0;
    element_type value = 0;
    bool ok = false;
    element_type out_value = 0;
    std::uint64_t out_n = 0;

    vector_entry() = default;
    vector_entry(const containers::vector_request<element_type>& r, const containers::vector_response<element_type>& s)
        : op(r.op), a(r.a), b(r.b), value(r.value), ok(s.ok), out_value(s.value), out_n(s.n) {}
};

// A sequential vector: the specification the trace is checked against.
struct vector_model {
    std::vector<element_type> items;
    // Applies e; false if e's recorded response is not what the specification returns.
    bool apply(const vector_entry& e) {
        using containers::vector_op;
        auto& v = items;
        switch (e.op) {
            case vector_op::push_back: if (e.ok) v.push_back(e.value); return true;  // may fail: heap
            case vector_op::pop_back: {
                if (v.empty()) return !e.ok;
                const auto x = v.back();
                v.pop_back();
                return e.ok && e.out_value == x;
            }
            case vector_op::get: return e.a < v.size() ? e.ok && e.out_value == v[e.a] : !e.ok;
            case vector_op::swap:
                if (e.a >= v.size() || e.b >= v.size()) return !e.ok;
                std::swap(v[e.a], v[e.b]);
                return e.ok;
            case vector_op::size: return e.out_n == v.size();
            case vector_op::capacity: return e.out_n >= v.size();
            case vector_op::reserve: return true;
        }
        return false;
    }
};

// The blocks a vector-core structure references: its header and its array.
inline std::vector<const std::byte*> vector_blocks(pmem::pool& image, std::uint64_t anchor) {
    const auto* h = reinterpret_cast<const containers::vector_header*>(image.base() + anchor);
    std::vector<const std::byte*> out{reinterpret_cast<const std::byte*>(h)};
    if (h->data != 0) out.push_back(image.base() + h->data);
    return out;
}

// The capacity of a vector-core structure, in elements, as the media holds it.
inline std::uint64_t vector_capacity(pmem::pool& image, std::uint64_t anchor) {
    return reinterpret_cast<const containers::vector_header*>(image.base() + anchor)->capacity;
}

}  // namespace ferrite::crash::container_check
