// The twin: the hint flag is set only after the fence, so a set flag means the line is
// durable, and the early return counts as fenced (the summary fences on every path). The
// valid byte is stored through an std::atomic_ref a getter returns by value.
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
        ferrite::pmem::pfence();
        flag.store(1, std::memory_order_release);
    }
};

FERRITE_FLOW_ROOT void publish(slot* s) {
    s->a_valid().store(1, std::memory_order_release);
    s->flush_once();
}
