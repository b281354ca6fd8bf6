// ferrite/sim/media_image.hpp: what a region of persistent memory would hold after a crash.
//
// The model is the five ordering axioms of docs/references.md (Izraelevitz et
// al.'s explicit epoch persistency, as refined for x86 in the NVM-support thesis, ch. 2):
//
//   * The *media image* holds, per 64-byte line, the newest contents that are guaranteed
//     durable. It starts as a copy of the region (everything before the session counts as
//     durable).
//   * pwb(line) by thread t takes a *snapshot* of the line as it is now and queues it for t
//     (a pending write-back). An NT store queues the stored bytes the same way (a masked
//     snapshot). pfence/psync by t make t's queued snapshots durable: they are applied to the
//     media image unless a newer snapshot of the same line is already there (versions are a
//     global sequence number, i.e. the line's coherence order).
//   * At a crash, every line whose cache contents may differ from the media image keeps, at
//     random and independently of other lines, one of: its media contents, any queued
//     snapshot newer than the media (the write-back may have completed without the fence),
//     or its current contents (the cache may have evicted it). Each choice is a program-order
//     prefix of the line's stores (axiom 1: stores to one line persist in order).
//
// Not modelled (see docs/crash-testing.md): intermediate values of a line between two of its
// stores that no pwb observed (only the media, queued and current versions are offered), and
// a masked NT snapshot that is older than the media version of its line is dropped, which can
// under-approximate durability when two threads NT-store to different bytes of one line.
//
// Not thread-safe: the session (session.hpp) serialises every call.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ferrite::sim {

inline constexpr std::size_t line_size = 64;

struct line_snapshot {
    std::size_t line = 0;        // line index within the region
    std::uint64_t version = 0;   // global order of snapshots
    std::uint64_t mask = ~0ull;  // bit i set: byte i belongs to the snapshot
    std::array<std::byte, line_size> bytes{};
};

class media_image {
public:
    // Track [base, base + size); size is a multiple of the line size (the pool's is).
    media_image(std::byte* base, std::size_t size);

    bool contains(const void* p) const noexcept;
    std::size_t line_of(const void* p) const noexcept;  // requires contains(p)
    std::size_t lines() const noexcept { return versions_.size(); }

    // Snapshot of the line's current bytes (masked: only bytes in mask).
    line_snapshot snapshot(std::size_t line, std::uint64_t mask = ~0ull) noexcept;
    // The line's current bytes equal its newest known version (media, or `pending` if given
    // and newer): a write-back now would carry nothing new.
    bool nothing_new(std::size_t line, const line_snapshot* newest_pending) const noexcept;
    // Make a snapshot durable (at a fence). Older than the media version: dropped.
    void persist(const line_snapshot&) noexcept;

    // Build a crash image of the whole region into `out` (resized to the region size):
    // see the header comment. `pending` are every thread's queued snapshots (reordered by
    // line here). Allocates nothing when `out` already has the region's size.
    template <class Random>
    void crash_image(Random& random, std::vector<const line_snapshot*>& pending,
                     std::vector<std::byte>& out) const;

    const std::byte* media_bytes() const noexcept { return media_.data(); }
    const std::byte* current_bytes() const noexcept { return base_; }

private:
    std::byte* base_;
    std::size_t size_;
    std::vector<std::byte> media_;
    std::vector<std::uint64_t> versions_;  // per line: version of the media contents
    std::uint64_t next_version_ = 1;
};

}  // namespace ferrite::sim

#include "ferrite/sim/media_image_crash.hpp"
