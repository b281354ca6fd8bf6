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

inline std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += s + "\n";
    return out;
}

}  // namespace ferrite_test
