// Inter-procedural: a helper writes the record; the root writes it back and fences.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

static void fill(record* r, std::uint64_t v) {
    r->data = v;
    r->tail = v;
}

FERRITE_FLOW_ROOT void reset(record* r) {
    fill(r, 0);
    ferrite::pmem::pwb_range(r, sizeof(record));
    ferrite::pmem::pfence();
}
