// Helpers shared by the alloc unit tests: an aligned region of plain memory to put a heap in,
// and a snapshot of everything observable about a heap (to assert "unchanged").
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"

namespace ferrite_test {

struct free_deleter {
    void operator()(void* p) const noexcept { std::free(p); }
};

// `size` bytes (rounded up to 4 KiB), 4 KiB aligned, zero-filled.
class region {
public:
    explicit region(std::size_t size) : size_((size + 4095) / 4096 * 4096), bytes_(static_cast<std::byte*>(std::aligned_alloc(4096, size_))) {
        std::memset(bytes_.get(), 0, size_);
    }
    std::byte* data() const noexcept { return bytes_.get(); }
    std::size_t size() const noexcept { return size_; }
    std::vector<std::byte> copy() const { return {bytes_.get(), bytes_.get() + size_}; }

private:
    std::size_t size_;
    std::unique_ptr<std::byte, free_deleter> bytes_;
};

// Everything a test can observe about a heap, comparable.
struct heap_snapshot {
    std::vector<std::string> problems;
    std::vector<std::tuple<std::uint64_t, unsigned, int>> blocks;
    std::uint64_t bytes_free = 0, pending_allocations = 0, pending_deallocations = 0;
    bool operator==(const heap_snapshot&) const = default;
};

inline heap_snapshot snapshot(const ferrite::alloc::buddy_heap& h) {
    heap_snapshot s;
    s.problems = h.check();
    for (const auto& b : h.blocks()) s.blocks.emplace_back(b.offset, b.order, static_cast<int>(b.state));
    const auto u = h.usage();
    s.bytes_free = u.bytes_free;
    s.pending_allocations = u.pending_allocations;
    s.pending_deallocations = u.pending_deallocations;
    return s;
}

// The words of a heap region, by name, to damage them in tests (the layout of heap_layout.hpp).
struct raw_heap {
    std::byte* base;
    ferrite::alloc::heap_geometry g;

    std::uint64_t& head(unsigned k) const { return reinterpret_cast<ferrite::alloc::heap_header*>(base)->free_heads[k]; }
    ferrite::alloc::free_links& links(std::uint64_t off) const {
        return *reinterpret_cast<ferrite::alloc::free_links*>(base + off);
    }
    std::uint8_t& map(std::uint64_t off) const {
        return reinterpret_cast<std::uint8_t*>(base + g.map_offset)[(off - g.arena_offset) / ferrite::alloc::granule];
    }
    std::uint64_t& slot(std::uint64_t i) const { return reinterpret_cast<std::uint64_t*>(base + g.slots_offset)[i]; }
    std::uint64_t& tag() const { return *reinterpret_cast<std::uint64_t*>(base + g.log_offset); }
    ferrite::alloc::log_entry& entry(std::uint64_t half, std::uint64_t i) const {
        return reinterpret_cast<ferrite::alloc::log_entry*>(base + g.log_offset + 64)[half * g.log_capacity + i];
    }
    std::uint64_t offset_of(const void* p) const {
        return static_cast<std::uint64_t>(static_cast<const std::byte*>(p) - base);
    }
    std::uint64_t offset_of(const std::uint64_t& word) const { return offset_of(static_cast<const void*>(&word)); }
};

inline std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += s + "\n";
    return out;
}

}  // namespace ferrite_test
