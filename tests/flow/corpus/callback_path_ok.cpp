// The twin: the replay fences after the callback's NT stores (reached through the
// two-level path closure.this.image_) and before it stores the applied word.
#include <cstddef>
#include <cstdint>

#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

struct replayer {
    std::uint64_t* image_;
    entry* applied_;

    void apply(std::size_t i, std::uint64_t v) noexcept { ferrite::pmem::nt_store(&image_[i], v); }

    template <class Fn>
    void for_each(std::size_t n, Fn&& fn) noexcept {
        for (std::size_t i = 0; i < n; ++i) fn(i, i * 3);
    }

    FERRITE_FLOW_ROOT void replay(std::size_t n) noexcept;
};

void replayer::replay(std::size_t n) noexcept {
    for_each(n, [&](std::size_t i, std::uint64_t v) { apply(i, v); });
    ferrite::pmem::pfence();
    applied_->valid = 1;
    ferrite::pmem::pwb(&applied_->valid);
    ferrite::pmem::pfence();
}
