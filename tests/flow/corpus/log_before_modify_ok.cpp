// Log before modify, corrected: the tag is durable before the word changes.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void update(undo_control* c, record* r, std::uint64_t v) {
    c->tag = 1;
    ferrite::pmem::pwb(c);
    ferrite::pmem::pfence();
    r->data = v;
    ferrite::pmem::pwb(&r->data);
    ferrite::pmem::pfence();
    c->tag = 0;
    ferrite::pmem::pwb(c);
    ferrite::pmem::pfence();
}
