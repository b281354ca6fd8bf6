// Inter-procedural sentinel before data, corrected: the helper persists the data.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

static void put(entry* e, std::uint64_t v) {
    e->data = v;
    ferrite::pmem::pwb(&e->data);
    ferrite::pmem::pfence();
}

FERRITE_FLOW_ROOT void fill(entry* e, std::uint64_t v) {
    put(e, v);
    e->valid = 1;
    ferrite::pmem::pwb(&e->valid);
    ferrite::pmem::pfence();
}
