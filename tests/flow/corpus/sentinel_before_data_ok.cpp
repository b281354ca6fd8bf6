// Sentinel before data, corrected: data written back and fenced, then the flag.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void fill(entry* e, std::uint64_t v) {
    e->data = v;
    ferrite::pmem::pwb(&e->data);
    ferrite::pmem::pfence();
    e->valid = 1;
    ferrite::pmem::pwb(&e->valid);
    ferrite::pmem::pfence();
}
