// Inter-procedural sentinel before data: a helper writes the data, the root sets the flag
// without persisting the data first.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

static void put(entry* e, std::uint64_t v) { e->data = v; }

FERRITE_FLOW_ROOT void fill(entry* e, std::uint64_t v) {
    put(e, v);
    e->valid = 1;  // flow-expect: pair
    ferrite::pmem::pwb(&e->data);
    ferrite::pmem::pwb(&e->valid);
    ferrite::pmem::pfence();
}
