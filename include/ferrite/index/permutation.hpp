// ferrite/index/permutation.hpp: a leaf's permutation word (Masstree's kpermuter): the order
// of the leaf's slots by key and how many of them hold keys, in one 64-bit word.
//
// Algorithm: [MASSTREE]'s permuter (docs/references.md). Bits 0-3 hold the count n; the
// nibble at bits 4p+4..4p+7 holds the slot at position p (p = 0..14). Positions 0..n-1 are the
// live slots in increasing key order; positions n..width-1 are the free slots, the next one to
// use first. Every slot 0..width-1 appears exactly once among positions 0..width-1.
// A leaf changes its key set by one store of this word: an insert writes its key and value
// into the free slot back() (a slot no reader's copy of the permutation names as live), then
// stores insert_from_back(p); an erase stores remove(p). A reader that loaded the word sees
// either the old or the new key set, never a mix.
//
// What differs from Masstree: nothing in the encoding; leaves here have width 14 (InCLL's,
// [NVM] ch. 3) and the word is a plain value type (the leaf holds it in an atomic).
//
// Crash consistency: none here (a value type). In InCLL the leaf's permutation line also holds
// permutationInCLL and nodeEpoch (nodes.hpp); the store order that protects it is the leaf's.
#pragma once

#include <cstdint>

namespace ferrite::index {

class permutation {
public:
    static constexpr unsigned max_width = 15;

    constexpr explicit permutation(std::uint64_t word = 0) noexcept : x_(word) {}
    // Empty, slots 0..width-1 in order as the free list.
    static constexpr permutation empty(unsigned width) noexcept { return identity(width, 0); }
    // The first n positions live and holding slots 0..n-1, the rest free in slot order.
    static constexpr permutation identity(unsigned width, unsigned n) noexcept {
        std::uint64_t x = n;
        for (unsigned p = 0; p < width; ++p) x |= std::uint64_t{p} << (4 * p + 4);
        return permutation(x);
    }

    constexpr std::uint64_t value() const noexcept { return x_; }
    constexpr unsigned size() const noexcept { return static_cast<unsigned>(x_ & 15); }
    // The slot at position p (0 <= p < max_width).
    constexpr unsigned operator[](unsigned p) const noexcept { return static_cast<unsigned>((x_ >> (4 * p + 4)) & 15); }
    // The free slot the next insert uses (size() < width).
    constexpr unsigned back() const noexcept { return (*this)[size()]; }

    // Moves the slot back() to position p (0 <= p <= size() < max_width - 1): positions
    // p..size()-1 shift up by one, the count grows by one.
    constexpr void insert_from_back(unsigned p) noexcept {
        const unsigned n = size();
        const std::uint64_t slot = back();
        const std::uint64_t low = (std::uint64_t{1} << (4 * p + 4)) - 1;       // count and positions < p
        const std::uint64_t upto_n = (std::uint64_t{1} << (4 * n + 4)) - 1;    // ... and positions < n
        const std::uint64_t high = ~((std::uint64_t{1} << (4 * n + 8)) - 1);   // positions > n
        x_ = (x_ & low) | ((x_ & upto_n & ~low) << 4) | (slot << (4 * p + 4)) | (x_ & high);
        x_ += 1;
    }
    // Moves the slot at position p (p < size()) to position size()-1, now the first free one:
    // positions p+1..size()-1 shift down by one, the count drops by one.
    constexpr void remove(unsigned p) noexcept {
        const unsigned n = size();
        const std::uint64_t slot = (*this)[p];
        const std::uint64_t low = (std::uint64_t{1} << (4 * p + 4)) - 1;
        const std::uint64_t below_last = (std::uint64_t{1} << (4 * (n - 1) + 4)) - 1;  // positions < n-1
        const std::uint64_t high = n >= 15 ? 0 : ~((std::uint64_t{1} << (4 * n + 4)) - 1);  // positions >= n
        x_ = (x_ & low) | ((x_ >> 4) & below_last & ~low) | (slot << (4 * (n - 1) + 4)) | (x_ & high);
        x_ -= 1;
    }
    // Keeps the first n positions live (n <= size()): the others become the first free ones.
    constexpr void truncate(unsigned n) noexcept { x_ = (x_ & ~std::uint64_t{15}) | n; }

private:
    std::uint64_t x_;
};

}  // namespace ferrite::index
