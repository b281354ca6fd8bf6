// ferrite/index/incll_words.hpp: the encodings InCLL keeps inside a leaf's lines: a value
// line's undo word, and the checks recovery makes of a permutation read from the media.
//
// Algorithm: [NVM] ch. 3 (L919-953, L1063-1078; docs/references.md): each value line of a
// leaf carries one undo word, (index, old value, low epoch bits). Here:
//   bits 0-3    the slot's index within its line, plus one (1..7); 0: the word is empty
//   bits 4-19   the low 16 bits of the epoch the word was written in
//   bits 20-63  the slot's value at the start of that epoch (44 bits)
// A zero-filled line holds an empty word, so a new leaf needs no initialisation of it.
//
// What differs from the thesis: its values are 44-bit pointers; ferrite's are 8-byte values,
// so an old value that needs more than 44 bits does not fit and the leaf goes to the external
// log instead (incll.cpp). The index is stored plus one so that 0 means "empty" and a stale
// word can be cleared with one store. Aliasing of the 16 epoch bits (a word written 65,536
// epochs ago) is excluded by the scrub at every wrap of the low bits and by recovery, which
// clears every word it reads (incll.hpp).
//
// Crash consistency: the word and the values it protects share a line; the word is stored
// before the value (release order), so the media never holds the new value without it.
#pragma once

#include <cstdint>
#include <optional>

#include "ferrite/index/permutation.hpp"

namespace ferrite::index::incll_words {

inline constexpr unsigned value_bits = 44;
inline constexpr std::uint64_t max_logged_value = (std::uint64_t{1} << value_bits) - 1;
inline constexpr std::uint64_t epoch_mask = 0xffff;

struct value_undo {
    unsigned index;           // within the line, 0..6
    std::uint64_t low_epoch;  // 16 bits
    std::uint64_t old_value;  // < 2^44
};

constexpr std::uint64_t encode(unsigned index, std::uint64_t old_value, std::uint64_t epoch) noexcept {
    return (old_value << 20) | ((epoch & epoch_mask) << 4) | (index + 1);
}
constexpr std::optional<value_undo> decode(std::uint64_t w) noexcept {
    if ((w & 15) == 0) return std::nullopt;
    return value_undo{static_cast<unsigned>((w & 15) - 1), (w >> 4) & epoch_mask, w >> 20};
}
constexpr bool same_epoch(std::uint64_t low_epoch, std::uint64_t epoch) noexcept { return low_epoch == (epoch & epoch_mask); }

// Whether `slot` is live (among the first size() positions) in p.
constexpr bool is_live(permutation p, unsigned slot) noexcept {
    for (unsigned i = 0; i < p.size(); ++i)
        if (p[i] == slot) return true;
    return false;
}

// A permutation word read from the media is usable for a leaf of `width` slots: count <=
// width, and positions 0..width-1 name every slot 0..width-1 exactly once.
constexpr bool valid_permutation(std::uint64_t word, unsigned width) noexcept {
    const permutation p(word);
    if (p.size() > width) return false;
    unsigned seen = 0;
    for (unsigned i = 0; i < width; ++i) {
        const unsigned s = p[i];
        if (s >= width || (seen & (1u << s)) != 0) return false;
        seen |= 1u << s;
    }
    return true;
}

}  // namespace ferrite::index::incll_words
