// Missing flush on one path, corrected: the branch writes back its own line.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void update(record* r, std::uint64_t v, bool also_tail) {
    r->data = v;
    ferrite::pmem::pwb(&r->data);
    if (also_tail) {
        r->tail = v;
        ferrite::pmem::pwb(&r->tail);
    }
    ferrite::pmem::pfence();
}
