// Inter-procedural: a helper writes the record; the root never persists what it wrote.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

static void fill(record* r, std::uint64_t v) {
    r->data = v;
    r->tail = v;
}

FERRITE_FLOW_ROOT void reset(record* r) {
    fill(r, 0);  // flow-expect: durability
    ferrite::pmem::pfence();
}
