// pwb_range too short, corrected: the whole record.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t v) {
    r->data = v;
    r->tail = v;
    ferrite::pmem::pwb_range(r, sizeof(record));
    ferrite::pmem::pfence();
}
