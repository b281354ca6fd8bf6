// One case of a switch forgets its write-back.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void apply(record* r, int op, std::uint64_t v) {
    switch (op) {
        case 0:
            r->data = v;
            ferrite::pmem::pwb(&r->data);
            break;
        case 1:
            r->tail = v;  // flow-expect: durability
            break;
        default: break;
    }
    ferrite::pmem::pfence();
}
