// Double flush: the same line written back twice with no store between (a wasted clwb).
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t a, std::uint64_t b) {
    r->data = a;
    r->more = b;
    ferrite::pmem::pwb(&r->data);
    ferrite::pmem::pwb(&r->more);  // flow-expect: double-flush
    ferrite::pmem::pfence();
}
