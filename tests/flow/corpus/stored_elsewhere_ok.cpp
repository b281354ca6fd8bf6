// The twin: seal() writes back the lines appended since the last seal (stores other calls
// made, declared by FERRITE_FLOW_STORED_ELSEWHERE) and fences before it returns, on the
// path that wrote back and on the one with nothing to write back.
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
        FERRITE_FLOW_STORED_ELSEWHERE(log.base + log.sealed, log.used - log.sealed);
        ferrite::pmem::pwb_range(log.base + log.sealed, log.used - log.sealed);
        log.sealed = log.used;
    }
    ferrite::pmem::pfence();
}
