// Double flush after a range, corrected: a store between the two write-backs.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t v) {
    r->data = v;
    r->tail = v;
    ferrite::pmem::pwb_range(r, sizeof(record));
    ferrite::pmem::pfence();
    r->tail = v + 1;
    ferrite::pmem::pwb(&r->tail);
    ferrite::pmem::pfence();
}
