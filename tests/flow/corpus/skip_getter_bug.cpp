// A statistics counter kept in a persistent field, reached through a getter: the root
// counts the hit and returns without writing the line back.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

static std::uint64_t& hits_of(record* r) { return r->more; }

FERRITE_FLOW_ROOT void touch(record* r) {
    hits_of(r) += 1;  // flow-expect: durability
    ferrite::pmem::pfence();
}
