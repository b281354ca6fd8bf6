// Inter-procedural: the helper writes the record back and fences.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

static void persist(const record* r) {
    ferrite::pmem::pwb_range(r, sizeof(record));
    ferrite::pmem::pfence();
}

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t v) {
    r->data = v;
    persist(r);
}
