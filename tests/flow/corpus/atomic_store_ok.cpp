// An atomic store to persistent memory, written back and fenced.
#include <atomic>
#include <cstdint>

#include "ferrite/pmem/flow.hpp"
#include "ferrite/pmem/primitives.hpp"

FERRITE_FLOW_ROOT void publish(std::atomic<std::uint64_t>* word, std::uint64_t v) {
    word->store(v, std::memory_order_release);
    ferrite::pmem::pwb(word);
    ferrite::pmem::pfence();
}
