// publish_new's shape, corrected: the helper fences the block it wrote back before the
// anchor helper stores the anchor (the callee's write-backs count before its sentinel store,
// its fence too: no report at the outer call).
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
    ferrite::pmem::pfence();
    publish(anchor, offset);
}

FERRITE_FLOW_ROOT void make(std::uint64_t& anchor, record* block, std::uint64_t offset) {
    block->data = 7;
    publish_new(anchor, block, offset);
}
