// A helper that stores a marked anchor, corrected: the caller fences the block first.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void publish(std::uint64_t& anchor, std::uint64_t offset) {
    FERRITE_FLOW_SENTINEL_AT(&anchor);
    anchor = offset;
    ferrite::pmem::pwb(&anchor);
    ferrite::pmem::pfence();
}

FERRITE_FLOW_ROOT void make(std::uint64_t& anchor, record* block, std::uint64_t offset) {
    block->data = 7;
    ferrite::pmem::pwb(&block->data);
    ferrite::pmem::pfence();
    publish(anchor, offset);
}
