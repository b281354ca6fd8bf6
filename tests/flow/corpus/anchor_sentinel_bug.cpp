// An anchor word reached through a reference parameter (no field to annotate), marked a
// sentinel with FERRITE_FLOW_SENTINEL_AT: the block it names is written back, not fenced.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void link(std::uint64_t& anchor, record* block, std::uint64_t offset) {
    FERRITE_FLOW_SENTINEL_AT(&anchor);
    block->data = 7;
    ferrite::pmem::pwb(&block->data);
    anchor = offset;  // flow-expect: pair
    ferrite::pmem::pwb(&anchor);
    ferrite::pmem::pfence();
}
