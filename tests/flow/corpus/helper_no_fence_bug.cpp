// Inter-procedural: the helper writes the record back but forgets the fence.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

static void write_back(const record* r) {
    ferrite::pmem::pwb_range(r, sizeof(record));
}

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t v) {
    r->data = v;  // flow-expect: durability
    write_back(r);
}
