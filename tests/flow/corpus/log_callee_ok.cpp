// The twin: the tag is written back and fenced before the helper changes the word it
// protects (install() writes back and fences its own store).
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
    ferrite::pmem::pfence();
    install(r, v);
    c->tag = 0;
    ferrite::pmem::pwb(c);
    ferrite::pmem::pfence();
}
