// Missing flush on one path: the store in the branch is never written back.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void update(record* r, std::uint64_t v, bool also_tail) {
    r->data = v;
    ferrite::pmem::pwb(&r->data);
    if (also_tail) r->tail = v;  // flow-expect: durability
    ferrite::pmem::pfence();
}
