// crash/containers/vector_target.cpp: crash targets vector-pfc and vector-fpfc.
//
// Workload: each thread runs a seeded mix of push_back (unique values), pop_back, swap and
// get over small indices, and reserve, on a vector that starts with capacity 2, in a pool
// whose heap is a ferrite::alloc::buddy_heap. Trace, recovery and checker: those of every
// container target (container_target.hpp), with the sequential vector of vector_model.hpp
// as the specification; the heap must hold exactly the vector's header and its array.
#include "ferrite/containers/vector.hpp"
#include "targets.hpp"
#include "vector_model.hpp"

namespace ferrite::crash {
namespace {

using namespace container_check;

template <class Selector>
struct vector_spec {
    using entry = vector_entry;
    using model = vector_model;
    using structure = ferrite::vector<element_type, heap_type, Selector, recording_trace<entry>>;
    static constexpr const char* name = "vector";

    static structure create(pmem::pool& p, heap_type& h, std::uint64_t& anchor, recording_trace<entry> t) {
        return structure::create(p, h, anchor, 2, {}, t);
    }
    static structure open(pmem::pool& p, heap_type& h, std::uint64_t anchor, recording_trace<entry> t = {}) {
        return structure::open(p, h, anchor, {}, t);
    }
    static void push(structure& s, element_type v) { (void)s.push_back(v); }
    static void pop(structure& s) { (void)s.pop_back(); }
    static std::uint64_t capacity(pmem::pool& image, std::uint64_t anchor) { return vector_capacity(image, anchor); }
    static std::vector<element_type> contents(const structure& v) {
        const auto view = v.unsynchronized_view();
        return {view.begin(), view.end()};
    }
    static std::vector<const std::byte*> blocks(pmem::pool& image, std::uint64_t anchor) {
        return vector_blocks(image, anchor);
    }

    static void run_op(structure& v, unsigned tid, std::uint64_t i, std::uint64_t r) {
        // Indices up to 23 span three cache lines of elements, so that a swap can be torn
        // between lines and only its undo log saves it.
        switch (r % 20) {
            case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 8:
                v.push_back(unique_value(tid, i));
                break;
            case 9: case 10: case 11: case 12: (void)v.pop_back(); break;
            case 13: case 14: case 15: case 16: v.swap(r >> 8 & 15, (r >> 12 & 15) + 8); break;
            case 17: case 18: (void)v.get(r >> 8 & 31); break;
            default: v.reserve(r >> 8 & 63); break;
        }
    }
};

}  // namespace

void register_vector_targets(sim::target_registry& r) {
    r.add(make_target<vector_spec<containers::use_pfc>>(
        "vector-pfc", "ferrite::vector on PFC: push/pop/swap/get/reserve from capacity 2, buddy heap"));
    r.add(make_target<vector_spec<containers::use_fpfc>>(
        "vector-fpfc", "ferrite::vector on FPFC: push/pop/swap/get/reserve from capacity 2, buddy heap"));
}

}  // namespace ferrite::crash
