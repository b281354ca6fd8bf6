// Flush of the wrong line, corrected: the line of the field written.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void set_tail(record* r, std::uint64_t v) {
    r->tail = v;
    ferrite::pmem::pwb(&r->tail);
    ferrite::pmem::pfence();
}
