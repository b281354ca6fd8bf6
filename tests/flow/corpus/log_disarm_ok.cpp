// A log disarmed in the cache only (tag := 0, not written back: a crash rolls back again,
// harmlessly), then an unrelated store: storing zero disarms, so nothing is checked against it.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void finish(undo_control* c, record* r, std::uint64_t v) {
    c->tag = 0;
    r->data = v;
    ferrite::pmem::pwb(&r->data);
    ferrite::pmem::pwb(c);
    ferrite::pmem::pfence();
}
