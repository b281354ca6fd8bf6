// Sentinel before data: the valid flag is set before the data is written back, so a crash
// can persist the flag without the data.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void fill(entry* e, std::uint64_t v) {
    e->data = v;
    e->valid = 1;  // flow-expect: pair
    ferrite::pmem::pwb(&e->data);
    ferrite::pmem::pwb(&e->valid);
    ferrite::pmem::pfence();
}
