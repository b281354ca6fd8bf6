// A compare-and-swap on persistent memory, written back and fenced.
#include <atomic>
#include <cstdint>

#include "ferrite/pmem/flow.hpp"
#include "ferrite/pmem/primitives.hpp"

FERRITE_FLOW_ROOT bool claim(std::atomic<std::uint64_t>* owner, std::uint64_t me) {
    std::uint64_t expected = 0;
    const bool won = owner->compare_exchange_strong(expected, me);
    ferrite::pmem::pwb(owner);
    ferrite::pmem::pfence();
    return won;
}
