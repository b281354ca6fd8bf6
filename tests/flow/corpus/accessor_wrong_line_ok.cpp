// A store through a field getter, its own line written back.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

static std::uint64_t* tail_of(record* r) { return &r->tail; }

FERRITE_FLOW_ROOT void put(record* r, std::uint64_t v) {
    *tail_of(r) = v;
    ferrite::pmem::pwb(tail_of(r));
    ferrite::pmem::pfence();
}
