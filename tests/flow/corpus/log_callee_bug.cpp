// Log before modify across a call (the vector's grow: the REPLACE tag, then install()):
// the tag is written back but not fenced when a helper, which writes back and fences its own
// store, changes the word the log protects; a crash may persist the word without the tag.
// The helper's store is durable at its return, so only the callee's stores
// (summary::stores) show it. The report is at the call.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

void install(record* r, std::uint64_t v) noexcept {
    r->data = v;
    ferrite::pmem::pwb(&r->data);
    ferrite::pmem::pfence();
}

FERRITE_FLOW_ROOT void grow(undo_control* c, record* r, std::uint64_t v) noexcept {
    c->tag = 1;
    ferrite::pmem::pwb(c);
    install(r, v);  // flow-expect: log
    c->tag = 0;
    ferrite::pmem::pwb(c);
    ferrite::pmem::pfence();
}
