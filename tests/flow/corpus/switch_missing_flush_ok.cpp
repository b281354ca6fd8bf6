// Every case of the switch writes back what it stored.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void apply(record* r, int op, std::uint64_t v) {
    switch (op) {
        case 0:
            r->data = v;
            ferrite::pmem::pwb(&r->data);
            break;
        case 1:
            r->tail = v;
            ferrite::pmem::pwb(&r->tail);
            break;
        default: break;
    }
    ferrite::pmem::pfence();
}
