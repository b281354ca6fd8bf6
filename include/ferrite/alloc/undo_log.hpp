// ferrite/alloc/undo_log.hpp: the heap's one-entry undo log (one operation in flight).
//
// Paper: PFC thesis Alg 5.11-5.15 (AREAOP log, WRITELOG: data, pwb, pfence, then tag, pwb,
// pfence; RECOVER rolls a half-done REQUEST or RELEASE back).
//
// Differences from the paper: the paper logs an operation's *parameters* and its RECOVER
// re-derives, step by step, what the forward operation might have changed (the extracted
// Alg 5.14/5.16 contain loops that do not match the forward code). Here the rollback is
// derived mechanically from the forward operation: the operation first computes every
// 8-byte word it will change (in a volatile write set, reading its own writes), the log
// records each word's *before-image*, and recovery writes them back. One log entry per
// operation, as in the paper: a tag (REQUEST or RELEASE, plus the word count) over the
// before-images. The price is a log of 16 bytes per changed word (4 + 5 words per split
// level for a request) instead of seven fixed words.
//
// Crash consistency
//   persistent: control.tag = kind | half << 7 | count << 8 (one 8-byte word, own line);
//               entries: two halves; half h [0..count) = {heap offset, old value}.
//   commit(kind):
//     1. entries of the other half := before-images; pwb; pfence   PP: undo record durable
//     2. tag := kind|half|count; pwb; pfence          PP: armed: from here a crash rolls back
//     3. apply the new values; pwb each line; pfence  PP: the effects are durable
//     4. tag := none; pwb; pfence                     LP/PP: committed
//   Each commit writes the half the previous armed tag did not name, so a tag still armed
//   in the media (a rollback's clear not yet durable) never names entries being rewritten.
//   rollback(): if the tag is armed, validate every entry first (armed_entries: a damaged
//   log writes nothing), then write the before-images back in reverse order, pwb
//   each line, pfence (PP), then tag := none in the cache only: a crash before it is
//   durable rolls back again, which is idempotent while nothing in the entries' reach has
//   changed durably; the next commit replaces the tag, and the next confirm-slot store
//   (the one write outside the log) writes it back first (flush_clear) so that its own
//   pfence makes both durable. (A pwb+pfence of the clear in rollback itself is what
//   flush mutation testing showed to be unobservable for the fence.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ferrite/alloc/heap_layout.hpp"
#include "ferrite/pmem/flow.hpp"

namespace ferrite::alloc {

enum class op_kind : std::uint8_t { none = 0, request = 1, release = 2 };

struct alignas(64) log_control {
    std::uint64_t tag FERRITE_FLOW_SENTINEL FERRITE_FLOW_LOG;  // persistent: op_kind | count << 8; 0 = no operation in flight
};

// The volatile write set of the operation being planned.
class write_set {
public:
    explicit write_set(std::size_t capacity) { writes_.reserve(capacity); }

    // The value the word will have: the planned one if written, else the current one.
    std::uint64_t read(const std::uint64_t* word) const noexcept;
    // Plan word := value (a second write to the same word replaces the first).
    void write(std::uint64_t* word, std::uint64_t value);
    void clear() noexcept { writes_.clear(); }
    bool empty() const noexcept { return writes_.empty(); }
    std::size_t size() const noexcept { return writes_.size(); }

    struct planned {
        std::uint64_t* word;
        std::uint64_t value;
    };
    const std::vector<planned>& writes() const noexcept { return writes_; }

private:
    std::vector<planned> writes_ FERRITE_FLOW_SKIP;  // volatile
};

// The persistent log of one heap (its control line and entries, inside the heap region).
class undo_log {
public:
    undo_log(std::byte* heap_base, log_control* control, log_entry* entries,
             std::uint64_t capacity) noexcept
        : base_(heap_base), control_(control), entries_(entries), capacity_(capacity) {}

    // Make the planned writes durable, all or nothing (steps 1-4 above). Clears `ws`.
    void commit(op_kind kind, write_set& ws) noexcept;

    // The entries of the armed operation (empty if none is armed), after checking that the
    // log holds what commit() could have written: a known kind, 1..capacity entries, each
    // naming a word an operation can change (loggable_word), no word twice. Throws
    // heap_error otherwise (a damaged heap). Reads only; O(count^2), count <= capacity.
    std::span<const log_entry> armed_entries(const heap_geometry& g) const;
    // Roll a half-done operation back (no-op if none is armed). Validates the whole log
    // (armed_entries) before it writes anything: a damaged log throws heap_error and leaves
    // the region unchanged.
    void rollback(const heap_geometry& g);
    // Before a store outside the log (a confirm slot) after a rollback: write the cleared
    // tag back, to become durable with the caller's pfence (see the header comment).
    void flush_clear() noexcept;

    op_kind armed() const noexcept { return static_cast<op_kind>(control_->tag & 0x7f); }
    std::uint64_t armed_count() const noexcept { return control_->tag >> 8; }
    std::uint64_t capacity() const noexcept { return capacity_; }

private:
    std::byte* base_;
    log_control* control_;
    log_entry* entries_;     // two halves of capacity_ entries each
    std::uint64_t capacity_;
    std::uint64_t half_ FERRITE_FLOW_SKIP = 0;        // volatile: the half the last armed tag named
    bool clear_unflushed_ FERRITE_FLOW_SKIP = false;  // volatile: rollback cleared the tag in the cache only
};

}  // namespace ferrite::alloc
