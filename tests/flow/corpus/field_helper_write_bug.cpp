// Inter-procedural, through a field: a helper writes the record its handle's field points
// to (an access path h->rec); the root fences but never writes it back.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

struct handle {
    record* rec;  // a volatile handle naming a record in the pool
};

static void fill(handle* h, std::uint64_t v) { h->rec->data = v; }

FERRITE_FLOW_ROOT void update(handle* h, std::uint64_t v) {
    fill(h, v);  // flow-expect: durability
    ferrite::pmem::pfence();
}
