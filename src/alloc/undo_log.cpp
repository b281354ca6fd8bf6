// The heap's undo log (see ferrite/alloc/undo_log.hpp).
#include "ferrite/alloc/undo_log.hpp"

#include <cstddef>
#include <cstdio>
#include <cstdlib>

#include "ferrite/error.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace ferrite::alloc {
namespace {

// Whether an earlier word of the first i shares word i's cache line (written back already).
template <class Addr>
bool line_seen(std::uint64_t i, Addr&& addr) noexcept {
    const auto line = reinterpret_cast<std::uintptr_t>(addr(i)) / pmem::cache_line_size;
    for (std::uint64_t j = 0; j < i; ++j)
        if (reinterpret_cast<std::uintptr_t>(addr(j)) / pmem::cache_line_size == line) return true;
    return false;
}

}  // namespace

std::uint64_t write_set::read(const std::uint64_t* word) const noexcept {
    for (const auto& w : writes_)
        if (w.word == word) return w.value;
    return *word;
}

void write_set::write(std::uint64_t* word, std::uint64_t value) {
    for (auto& w : writes_)
        if (w.word == word) {
            w.value = value;
            return;
        }
    writes_.push_back({word, value});
}

void undo_log::commit(op_kind kind, write_set& ws) noexcept {
    const auto& writes = ws.writes();
    const std::uint64_t n = writes.size();
    if (n == 0) return;
    if (n > capacity_) {
        // Cannot happen: log_capacity_for() bounds every operation. Refuse to go on rather
        // than log past the entries.
        std::fprintf(stderr, "ferrite: internal error: heap operation changes %llu words, undo log holds %llu\n",
                     static_cast<unsigned long long>(n), static_cast<unsigned long long>(capacity_));
        std::abort();
    }
    // Use the half the last armed tag did not name: a tag left armed by a crash (and
    // cleared by recovery only in the cache) never sees its entries overwritten.
    half_ ^= 1;
    auto* entries = entries_ + half_ * capacity_;
    for (std::uint64_t i = 0; i < n; ++i)
        entries[i] = {static_cast<std::uint64_t>(reinterpret_cast<std::byte*>(writes[i].word) - base_),
                      *writes[i].word};
    pmem::pwb_range(entries, n * sizeof(log_entry));
    pmem::pfence();  // PP: before-images durable before the tag names them

    control_->tag = static_cast<std::uint64_t>(kind) | half_ << 7 | n << 8;  // replaces any stale tag
    clear_unflushed_ = false;
    pmem::pwb(control_);
    pmem::pfence();  // PP: armed before the first change can reach the media

    for (const auto& w : writes) *w.word = w.value;
    const auto word = [&](std::uint64_t i) { return writes[i].word; };
    for (std::uint64_t i = 0; i < n; ++i)
        if (!line_seen(i, word)) pmem::pwb(writes[i].word);
    pmem::pfence();  // PP: every change durable before the commit

    control_->tag = 0;  // LP: the operation has happened
    pmem::pwb(control_);
    pmem::pfence();  // PP: durable before the caller's next store (a client persisting the
                     // returned block could otherwise reach the media before the commit)
    ws.clear();
}

void undo_log::rollback(std::uint64_t region_size) {
    const auto tag = control_->tag;
    if (tag == 0) return;
    const auto kind = tag & 0x7f;
    const auto half = tag >> 7 & 1;
    const auto n = tag >> 8;
    if ((kind != static_cast<std::uint64_t>(op_kind::request) &&
         kind != static_cast<std::uint64_t>(op_kind::release)) ||
        n == 0 || n > capacity_)
        throw heap_error("heap undo log is damaged (tag " + std::to_string(tag) +
                         "): this is not a heap written by ferrite, or its memory was overwritten; "
                         "restore the pool from a backup");
    const auto* entries = entries_ + half * capacity_;
    // Operations change the free-list heads, the slots, the map and free blocks: never the
    // identity or the log itself.
    const auto log_offset = static_cast<std::uint64_t>(reinterpret_cast<std::byte*>(control_) - base_);
    const auto log_end = static_cast<std::uint64_t>(reinterpret_cast<std::byte*>(entries_ + 2 * capacity_) - base_);
    for (std::uint64_t i = 0; i < n; ++i) {
        const auto off = entries[i].offset;
        if (off % 8 != 0 || off < offsetof(heap_header, free_heads) || off + 8 > region_size ||
            (off >= log_offset && off < log_end))
            throw heap_error("heap undo log entry " + std::to_string(i) + " points outside the heap (offset " +
                             std::to_string(off) + "): the heap is damaged; restore the pool from a backup");
    }
    for (std::uint64_t i = n; i-- > 0;) {
        auto* word = reinterpret_cast<std::uint64_t*>(base_ + entries[i].offset);
        *word = entries[i].old;
    }
    const auto word = [&](std::uint64_t i) { return base_ + entries[i].offset; };
    for (std::uint64_t i = 0; i < n; ++i)
        if (!line_seen(i, word)) pmem::pwb(word(i));
    pmem::pfence();  // PP: the heap is back in its state before the operation...
    control_->tag = 0;  // ...before the cleared tag can reach the media
    // Not written back here. Until it is durable a crash rolls back again, which restores
    // the same values and is harmless as long as nothing the entries cover was changed
    // durably since. Later writes: the next commit uses the other half of the entries and
    // replaces the tag in one store; a confirm-slot store (the only write outside the log)
    // first calls flush_clear(), so the clear is durable under that store's own pfence.
    half_ = half;
    clear_unflushed_ = true;
}

void undo_log::flush_clear() noexcept {
    if (!clear_unflushed_) return;
    pmem::pwb(control_);  // durable with the caller's next pfence, before its store returns
    clear_unflushed_ = false;
}

}  // namespace ferrite::alloc
