// A write-back-once helper (link-free's flush_insert) whose hint flag is set
// before its fence: a thread that finds the flag set and returns early has no fence of its
// own, and the thread that set it may not have fenced yet. The valid byte is stored through
// an std::atomic_ref a getter returns by value (a persistent field, not FERRITE_FLOW_SKIP).
#include <atomic>
#include <cstdint>

#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

struct alignas(64) slot {
    std::uint8_t valid;
    std::uint8_t flushed FERRITE_FLOW_SKIP;  // a hint: set once the line is durable
    std::atomic_ref<std::uint8_t> a_valid() noexcept { return std::atomic_ref<std::uint8_t>(valid); }

    void flush_once() noexcept {
        std::atomic_ref<std::uint8_t> flag(flushed);
        if (flag.load(std::memory_order_acquire) != 0) return;
        ferrite::pmem::pwb(this);
        flag.store(1, std::memory_order_release);
        ferrite::pmem::pfence();
    }
};

FERRITE_FLOW_ROOT void publish(slot* s) {
    s->a_valid().store(1, std::memory_order_release);  // flow-expect: durability
    s->flush_once();
}
