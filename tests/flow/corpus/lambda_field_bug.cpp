// The undo log's rollback whose write-back lambda computes its addresses from the wrong
// field of the captured `this` (mirror_, not base_): the restored words are never written
// back.
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
    for (std::size_t i = 0; i < n; ++i) *reinterpret_cast<std::uint64_t*>(base_ + entries[i].offset) = entries[i].old;  // flow-expect: durability
    const auto word = [&](std::size_t i) { return mirror_ + entries[i].offset; };
    for (std::size_t i = 0; i < n; ++i) ferrite::pmem::pwb(word(i));
    ferrite::pmem::pfence();
}
