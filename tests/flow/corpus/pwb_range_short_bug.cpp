// pwb_range too short: eight bytes written back of a record written on both its lines.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t v) {
    r->data = v;
    r->tail = v;  // flow-expect: durability
    ferrite::pmem::pwb_range(r, sizeof r->data);
    ferrite::pmem::pfence();
}
