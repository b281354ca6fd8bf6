// An anchor word marked a sentinel, corrected: the block is durable before the anchor names it.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void link(std::uint64_t& anchor, record* block, std::uint64_t offset) {
    FERRITE_FLOW_SENTINEL_AT(&anchor);
    block->data = 7;
    ferrite::pmem::pwb(&block->data);
    ferrite::pmem::pfence();
    anchor = offset;
    ferrite::pmem::pwb(&anchor);
    ferrite::pmem::pfence();
}
