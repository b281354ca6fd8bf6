// The heap's undo log (see ferrite/alloc/undo_log.hpp).
#include "ferrite/alloc/undo_log.hpp"

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>

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

std::string hex(std::uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
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

FERRITE_FLOW_ROOT void undo_log::commit(op_kind kind, write_set& ws) noexcept {
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

std::span<const log_entry> undo_log::armed_entries(const heap_geometry& g) const {
    const auto tag = control_->tag;
    if (tag == 0) return {};
    const auto kind = tag & 0x7f;
    const auto half = tag >> 7 & 1;
    const auto n = tag >> 8;
    if ((kind != static_cast<std::uint64_t>(op_kind::request) &&
         kind != static_cast<std::uint64_t>(op_kind::release)) ||
        n == 0 || n > capacity_)
        throw heap_error("buddy heap is damaged: its undo log's control word is " + hex(tag) +
                         " (kind " + std::to_string(kind) + ", " + std::to_string(n) +
                         " entries; an operation is kind 1 or 2 with 1.." + std::to_string(capacity_) +
                         "); nothing was changed: restore the pool from a copy");
    const auto* entries = entries_ + half * capacity_;
    // Operations change the free-list heads, the slots, the map and the links of free
    // blocks: never the identity, the log itself or padding; and each word once.
    for (std::uint64_t i = 0; i < n; ++i) {
        const auto off = entries[i].offset;
        if (!loggable_word(g, off))
            throw heap_error("buddy heap is damaged: undo log entry " + std::to_string(i) + " of " +
                             std::to_string(n) + " names offset " + hex(off) +
                             ", which no heap operation writes (outside the heap, misaligned, in its "
                             "header or in the log); nothing was changed: restore the pool from a copy");
        for (std::uint64_t j = 0; j < i; ++j)
            if (entries[j].offset == off)
                throw heap_error("buddy heap is damaged: undo log entries " + std::to_string(j) + " and " +
                                 std::to_string(i) + " both name offset " + hex(off) +
                                 "; nothing was changed: restore the pool from a copy");
    }
    return {entries, n};
}

FERRITE_FLOW_ROOT void undo_log::rollback(const heap_geometry& g) {
    const auto armed = armed_entries(g);  // throws, writing nothing, if the log is damaged
    if (armed.empty()) return;
    const auto* entries = armed.data();
    const auto n = armed.size();
    const auto half = control_->tag >> 7 & 1;
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

FERRITE_FLOW_ROOT void undo_log::flush_clear() noexcept {
    if (!clear_unflushed_) return;
    pmem::pwb(control_);  // durable with the caller's next pfence, before its store returns
    clear_unflushed_ = false;
}

}  // namespace ferrite::alloc
