// Inter-procedural, through a field: a helper writes the record its handle's field points
// to (an access path h->rec); the root writes that record's line back and fences.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

struct handle {
    record* rec;  // a volatile handle naming a record in the pool
};

static void fill(handle* h, std::uint64_t v) { h->rec->data = v; }

FERRITE_FLOW_ROOT void update(handle* h, std::uint64_t v) {
    fill(h, v);
    ferrite::pmem::pwb(&h->rec->data);
    ferrite::pmem::pfence();
}
