// A write-back-only seal (the epoch log's): append() stores records and leaves them in the
// cache; seal(), another call, writes back the lines appended since the last seal, but the
// fence that makes them durable before the caller may commit is missing. No store is made
// in seal() itself: the declaration FERRITE_FLOW_STORED_ELSEWHERE says whose stores its
// write-back is for, and the analysis finds them written back but not fenced.
#include <cstddef>
#include <cstdint>

#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

struct seal_log {
    std::byte* base;
    std::uint64_t used FERRITE_FLOW_SKIP;    // bytes appended (volatile)
    std::uint64_t sealed FERRITE_FLOW_SKIP;  // bytes written back by seal (volatile)
};

FERRITE_FLOW_ROOT void seal(seal_log& log) noexcept {
    if (log.used > log.sealed) {
        FERRITE_FLOW_STORED_ELSEWHERE(log.base + log.sealed, log.used - log.sealed);  // flow-expect: durability
        ferrite::pmem::pwb_range(log.base + log.sealed, log.used - log.sealed);
        log.sealed = log.used;
    }
}
