// Missing flush, corrected: write back, then fence.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t v) {
    r->data = v;
    ferrite::pmem::pwb(&r->data);
    ferrite::pmem::pfence();
}
