// The twin: the undo log's rollback. One loop restores each logged word at base_ plus the
// entry's offset; a second loop writes each back through a lambda that computes the same
// address (`word(i)`: base_, a field of the captured `this`, plus entries[i].offset: a
// two-level getter); one fence follows. The lambda's result is base_'s object, so the
// second loop's exit covers the first loop's stores: no report.
#include <cstddef>
#include <cstdint>

#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

struct log_entry {
    std::uint64_t offset;
    std::uint64_t old;
};

struct undo {
    std::byte* base_;
    std::byte* mirror_;

    FERRITE_FLOW_ROOT void rollback(const log_entry* entries, std::size_t n) noexcept;
};

void undo::rollback(const log_entry* entries, std::size_t n) noexcept {
    for (std::size_t i = 0; i < n; ++i) *reinterpret_cast<std::uint64_t*>(base_ + entries[i].offset) = entries[i].old;
    const auto word = [&](std::size_t i) { return base_ + entries[i].offset; };
    for (std::size_t i = 0; i < n; ++i) ferrite::pmem::pwb(word(i));
    ferrite::pmem::pfence();
}
