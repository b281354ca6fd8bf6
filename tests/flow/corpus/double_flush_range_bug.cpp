// Double flush after a range: pwb_range already wrote back the record's lines.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t v) {
    r->data = v;
    r->tail = v;
    ferrite::pmem::pwb_range(r, sizeof(record));
    ferrite::pmem::pwb(&r->tail);  // flow-expect: double-flush
    ferrite::pmem::pfence();
}
