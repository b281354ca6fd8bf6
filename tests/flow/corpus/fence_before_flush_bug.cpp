// Fence before the write-back: the order of the two is swapped, nothing fences the write-back.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t v) {
    r->data = v;  // flow-expect: durability
    ferrite::pmem::pfence();
    ferrite::pmem::pwb(&r->data);
}
