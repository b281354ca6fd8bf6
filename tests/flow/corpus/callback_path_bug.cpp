// The epoch log's replay: records are applied through a callback (a lambda that captures
// `this` and calls apply(), which NT-stores into image_), and the applied word, a sentinel,
// is stored with no fence after the records: a crash may persist the word before the image.
// The NT stores reach the root only through a two-level path (closure.this.image_).
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
    applied_->valid = 1;  // flow-expect: pair
    ferrite::pmem::pwb(&applied_->valid);
    ferrite::pmem::pfence();
}
