// ferrite/combining/dfc_node_pool.hpp: DFC's preallocated nodes and their volatile bitmap.
//
// Paper: DFC stack (Rusanovsky, Attiya, Ben-Baruch, Gerby, Hendler, Ramalhete; "003"
// L303-320): every node lives in a pool preallocated in NVM; which nodes are in use is kept
// in a *volatile* hierarchical bitmap that the recovery's garbage collection rebuilds from
// the nodes reachable from the active roots. Allocation and deallocation therefore cost no
// pwb and no pfence at all: only the combiner allocates, and a crash forgets the bitmap.
//
// Differences from the paper: the paper's bitmap has two levels (64 words + a root word,
// 4096 nodes). node_bitmap has as many levels as the capacity needs (64^L nodes), so a pool
// of any size the region holds works; alloc/free touch one word per level. Node numbers
// start at 1: 0 is the null link, so zero-filled memory holds null links.
//
// Crash consistency: nothing here is persistent except the nodes themselves, which the
// structures write and write back (their headers say when). The bitmap is rebuilt by
// recovery (reset_all_free + take for every reachable node) before anything allocates.
// take/release/is_free index the bitmap with n unchecked: node numbers read from the media
// reach them only after dfc_validation.hpp found them in 1..capacity.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace ferrite::combining {

// A persistent node of a DFC structure: 32 bytes, two per cache line. Only the combiner
// (and recovery, alone) reads or writes nodes, so plain words suffice.
struct dfc_node {
    std::uint64_t param;  // the element (T's bytes)
    std::uint64_t next;   // node number, 0 = null
    std::uint64_t prev;   // deque only
    std::uint64_t unused;
};
static_assert(sizeof(dfc_node) == 32);

// Volatile multi-level free bitmap over nodes 1..capacity. Bit set = free. Level 0 has one
// bit per node; bit j of level l+1 says whether word j of level l has a free bit.
class node_bitmap {
public:
    node_bitmap() = default;
    explicit node_bitmap(std::uint64_t capacity) { reset_all_free(capacity); }

    std::uint64_t capacity() const noexcept { return capacity_; }
    std::uint64_t used() const noexcept { return used_; }

    void reset_all_free(std::uint64_t capacity) {
        capacity_ = capacity;
        used_ = 0;
        levels_.clear();
        std::uint64_t bits = capacity;
        do {
            const std::uint64_t words = (bits + 63) / 64;
            std::vector<std::uint64_t> level(words, ~std::uint64_t{0});
            if (bits % 64) level.back() = (std::uint64_t{1} << (bits % 64)) - 1;
            if (bits == 0) level.assign(1, 0);
            levels_.push_back(std::move(level));
            bits = words;
        } while (bits > 1);
    }

    // A free node number (>= 1), marked used; 0 if none is free.
    std::uint64_t allocate() noexcept {
        if (levels_.empty() || levels_.back()[0] == 0) return 0;
        std::uint64_t index = 0;
        for (std::size_t l = levels_.size(); l-- > 0;)
            index = index * 64 + static_cast<std::uint64_t>(std::countr_zero(levels_[l][index]));
        take(index + 1);
        return index + 1;
    }

    // Mark node n (1-based) used. No-op if it already is.
    void take(std::uint64_t n) noexcept {
        std::uint64_t i = n - 1;
        for (auto& level : levels_) {
            auto& w = level[i / 64];
            const std::uint64_t bit = std::uint64_t{1} << (i % 64);
            if (!(w & bit)) return;
            if (&level == &levels_.front()) ++used_;
            w &= ~bit;
            if (w != 0) return;  // the word still has a free bit: parents unchanged
            i /= 64;
        }
    }

    // Mark node n (1-based) free. No-op if it already is.
    void release(std::uint64_t n) noexcept {
        std::uint64_t i = n - 1;
        for (auto& level : levels_) {
            auto& w = level[i / 64];
            const std::uint64_t bit = std::uint64_t{1} << (i % 64);
            if (w & bit) return;
            if (&level == &levels_.front()) --used_;
            const bool was_empty = w == 0;
            w |= bit;
            if (!was_empty) return;  // parents already say "has a free bit"
            i /= 64;
        }
    }

    bool is_free(std::uint64_t n) const noexcept {
        return (levels_.front()[(n - 1) / 64] >> ((n - 1) % 64)) & 1;
    }
    std::size_t levels() const noexcept { return levels_.size(); }

private:
    std::uint64_t capacity_ = 0;
    std::uint64_t used_ = 0;
    std::vector<std::vector<std::uint64_t>> levels_;
};

}  // namespace ferrite::combining
