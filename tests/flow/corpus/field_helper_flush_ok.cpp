// Inter-procedural, through a field: the root writes the record's second line; the helper
// it calls writes back that line of the record its handle's field points to (the access
// path h->rec), then fences.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

struct handle {
    record* rec;  // a volatile handle naming a record in the pool
};

static void persist(handle* h) {
    ferrite::pmem::pwb(&h->rec->tail);
    ferrite::pmem::pfence();
}

FERRITE_FLOW_ROOT void update(handle* h, std::uint64_t v) {
    h->rec->tail = v;
    persist(h);
}
