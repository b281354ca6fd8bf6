// The same shape with the log armed (tag := 1) instead of cleared: the store after it needs
// the tag durable first.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void finish(undo_control* c, record* r, std::uint64_t v) {
    c->tag = 1;
    r->data = v;  // flow-expect: log
    ferrite::pmem::pwb(&r->data);
    ferrite::pmem::pwb(c);
    ferrite::pmem::pfence();
}
