// The deque's grow with a header line written back before the copy loop: when n is zero
// the fence is skipped and the header's store is never fenced (the loop's bound says
// nothing about it).
#include <cstdint>

#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void copy(record* to, record* head, const std::uint64_t* from, std::uint64_t n) noexcept {
    head->tail = n;  // flow-expect: durability
    ferrite::pmem::pwb(&head->tail);
    for (std::uint64_t k = 0; k < n; ++k) {
        to[k].data = from[k];
        ferrite::pmem::pwb(&to[k]);
    }
    if (n > 0) ferrite::pmem::pfence();
}
