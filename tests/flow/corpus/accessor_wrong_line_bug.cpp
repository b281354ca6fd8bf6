// A store through a field getter, then a write-back of the wrong line: the checker follows
// the getter (it returns its argument plus a constant offset) back to the record.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

static std::uint64_t* tail_of(record* r) { return &r->tail; }

FERRITE_FLOW_ROOT void put(record* r, std::uint64_t v) {
    *tail_of(r) = v;  // flow-expect: durability
    ferrite::pmem::pwb(&r->data);
    ferrite::pmem::pfence();
}
