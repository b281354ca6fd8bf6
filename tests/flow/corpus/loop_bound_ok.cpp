// The twin: the deque's grow (persistent_deque_core.hpp): a loop copies `n` elements into the
// new ring (stored and written back), then `if (n > 0) pfence();`. When n is zero the loop's
// test `k < n` is false at once, so the edge that skips the fence comes with no write-back:
// no report (the meet kept the loop's Flush on that edge).
#include <cstdint>

#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void copy(record* to, const std::uint64_t* from, std::uint64_t n) noexcept {
    for (std::uint64_t k = 0; k < n; ++k) {
        to[k].data = from[k];
        ferrite::pmem::pwb(&to[k]);
    }
    if (n > 0) ferrite::pmem::pfence();
}
