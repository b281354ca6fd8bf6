// Pair without the fence: the data is written back but not fenced before the sentinel's store.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void fill(entry* e, std::uint64_t v) {
    e->data = v;
    ferrite::pmem::pwb(&e->data);
    e->valid = 1;  // flow-expect: pair
    ferrite::pmem::pwb(&e->valid);
    ferrite::pmem::pfence();
}
