// A record never written back, beside volatile state reached through wrappers returned by
// value: a range-for's iterators over a FERRITE_FLOW_SKIP std::vector, and an
// std::atomic_ref to a FERRITE_FLOW_SKIP field from a getter (link-free's a_next()); and a
// record reached through a view returned by value, never written back either.
#include <atomic>
#include <cstdint>
#include <vector>

#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

struct alignas(64) owner {
    record* rec;
    std::vector<std::uint64_t> counts FERRITE_FLOW_SKIP;
    std::uint64_t link FERRITE_FLOW_SKIP;
    std::atomic_ref<std::uint64_t> a_link() noexcept { return std::atomic_ref<std::uint64_t>(link); }
};

// A view returned by value (sret) holds pool pointers: its getter's records are persistent,
// not a local container's DRAM.
struct view {
    record* recs;
    std::uint64_t pad[4];
    record& at(std::uint64_t i) noexcept { return recs[i]; }
};
view view_of(owner* o) noexcept { return {o->rec, {}}; }

FERRITE_FLOW_ROOT void reset(owner* o, std::uint64_t v) {
    o->rec->data = v;  // flow-expect: durability
    view w = view_of(o);
    w.at(v).tail = v;  // flow-expect: durability
    for (auto& c : o->counts) c = 0;
    o->a_link().store(v, std::memory_order_relaxed);
    ferrite::pmem::pfence();
}
