// Log before modify, broken: the undo log's tag (FERRITE_FLOW_LOG) is written back but not
// fenced before the word it protects changes; a crash may persist the word without the tag.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void update(undo_control* c, record* r, std::uint64_t v) {
    c->tag = 1;
    ferrite::pmem::pwb(c);
    r->data = v;  // flow-expect: log
    ferrite::pmem::pwb(&r->data);
    ferrite::pmem::pfence();
    c->tag = 0;
    ferrite::pmem::pwb(c);
    ferrite::pmem::pfence();
}
