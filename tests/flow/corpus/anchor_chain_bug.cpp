// publish_new's shape: a helper writes the caller's block back and hands it to the helper that
// stores the marked anchor, with no fence between; the report is at the outer call, where the
// block was written.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void publish(std::uint64_t& anchor, std::uint64_t offset) {
    FERRITE_FLOW_SENTINEL_AT(&anchor);
    anchor = offset;
    ferrite::pmem::pwb(&anchor);
    ferrite::pmem::pfence();
}

FERRITE_FLOW_ROOT void publish_new(std::uint64_t& anchor, record* block, std::uint64_t offset) {
    ferrite::pmem::pwb(&block->data);
    publish(anchor, offset);
}

FERRITE_FLOW_ROOT void make(std::uint64_t& anchor, record* block, std::uint64_t offset) {
    block->data = 7;
    publish_new(anchor, block, offset);  // flow-expect: pair
}
