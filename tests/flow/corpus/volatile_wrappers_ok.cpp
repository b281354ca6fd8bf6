// The twin: the record written back and fenced. The counters (a range-for's iterators over a
// FERRITE_FLOW_SKIP std::vector: begin() returns its _M_start by value) and the link (an
// std::atomic_ref a getter returns by value, bound to a FERRITE_FLOW_SKIP field) are
// volatile: neither store needs a write-back.
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

FERRITE_FLOW_ROOT void reset(owner* o, std::uint64_t v) {
    o->rec->data = v;
    ferrite::pmem::pwb(&o->rec->data);
    for (auto& c : o->counts) c = 0;
    o->a_link().store(v, std::memory_order_relaxed);
    ferrite::pmem::pfence();
}
