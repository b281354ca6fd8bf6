// The twin: the record written back and fenced. The counters (a range-for's iterators over a
// FERRITE_FLOW_SKIP std::vector: begin() returns its _M_start by value) and the link (an
// std::atomic_ref a getter returns by value, bound to a FERRITE_FLOW_SKIP field) are
// volatile: neither store needs a write-back. The view's record is written back.
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
    o->rec->data = v;
    ferrite::pmem::pwb(&o->rec->data);
    view w = view_of(o);
    w.at(v).tail = v;
    ferrite::pmem::pwb(&w.at(v).tail);
    for (auto& c : o->counts) c = 0;
    o->a_link().store(v, std::memory_order_relaxed);
    ferrite::pmem::pfence();
}
