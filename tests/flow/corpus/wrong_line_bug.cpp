// Flush of the wrong line: the store is to the record's second line, the write-back to its first.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void set_tail(record* r, std::uint64_t v) {
    r->tail = v;  // flow-expect: durability
    ferrite::pmem::pwb(r);
    ferrite::pmem::pfence();
}
