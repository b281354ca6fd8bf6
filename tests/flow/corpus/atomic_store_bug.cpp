// An atomic store to persistent memory is a store like any other: it needs a write-back.
#include <atomic>
#include <cstdint>

#include "ferrite/pmem/flow.hpp"
#include "ferrite/pmem/primitives.hpp"

FERRITE_FLOW_ROOT void publish(std::atomic<std::uint64_t>* word, std::uint64_t v) {
    word->store(v, std::memory_order_release);  // flow-expect: durability
    ferrite::pmem::pfence();
}
