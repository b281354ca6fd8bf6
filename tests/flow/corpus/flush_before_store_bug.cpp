// Write-back before the store: the line is written back, then written again.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t v) {
    ferrite::pmem::pwb(&r->data);
    r->data = v;  // flow-expect: durability
    ferrite::pmem::pfence();
}
