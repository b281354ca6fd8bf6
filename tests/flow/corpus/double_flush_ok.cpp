// Double flush, corrected: data and more share a line; one write-back covers both.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t a, std::uint64_t b) {
    r->data = a;
    r->more = b;
    ferrite::pmem::pwb(&r->data);
    ferrite::pmem::pfence();
}
