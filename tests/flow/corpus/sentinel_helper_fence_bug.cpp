// A helper stores the entry's valid flag and writes it back, leaving the fence to its
// caller; the root never fences after it.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

static void mark_valid(entry* e) {
    e->valid = 1;
    ferrite::pmem::pwb(&e->valid);
}

FERRITE_FLOW_ROOT void append(entry* e, std::uint64_t v) {
    e->data = v;
    ferrite::pmem::pwb(&e->data);
    ferrite::pmem::pfence();
    mark_valid(e);  // flow-expect: durability
}
