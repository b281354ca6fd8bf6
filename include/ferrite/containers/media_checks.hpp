// ferrite/containers/media_checks.hpp: what the validators of the vector and deque headers
// (vector_recovery.hpp, deque_recovery.hpp) share: reading one persistent word as a count, a
// byte size or the pool offset of a heap block, and the error that names the word.
//
// A pool file is input like any other: a fuzzer that mutated header words crashed the
// library (a size beyond the capacity, a data offset of 0) and, worse, made it write into
// neighbouring heap blocks (a capacity larger than the array's block overwrote the next
// block's free-list links). So no header word is used as a size, an offset or a pointer
// before a check here has put it in its domain. The checks only read: a structure whose
// header fails one is reported as ferrite::damaged_pool (kind damaged_object, region the
// structure's kind, object "": the catalog adds the name), and nothing has been written.
//
// Offsets are compared as integers before any pointer is formed from them (a pointer beyond
// the mapping is undefined behaviour, even unused). Heap blocks are judged by the heap's
// own observers (state(), block_size()), which read its block map and confirm slots.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ferrite/alloc/heap_stats.hpp"
#include "ferrite/error.hpp"
#include "ferrite/pmem/pool.hpp"

namespace ferrite::containers {

// A set of heap block states (alloc::block_state), for the states a word's block may be in.
using block_states = unsigned;
constexpr block_states states(alloc::block_state s) noexcept { return 1u << static_cast<unsigned>(s); }
// A block a structure names and keeps: confirmed, or allocated by a create() or growth whose
// confirmation a crash cut off (its recovery confirms it).
inline constexpr block_states kept_states =
    states(alloc::block_state::live) | states(alloc::block_state::allocation_pending);

// The checks of one structure's header, at pool offset `anchor`; `kind` names the structure
// ("vector", "deque") in the errors.
class header_check {
public:
    header_check(const pmem::pool_ref& pool, std::string_view kind, std::uint64_t anchor) noexcept
        : pool_(pool), kind_(kind), anchor_(anchor) {}

    // Throws damaged_pool: "<kind>: header at pool offset A of 'path': <word> = <value>
    // <problem>; <advice>".
    [[noreturn]] void fail(std::string_view word, std::uint64_t value, const std::string& problem,
                           std::string_view advice = "restore the pool from a copy") const {
        throw_damaged(pool_errc::damaged_object, kind_, "",
                      "header at pool offset " + std::to_string(anchor_) + " of '" + pool_.path().string() + "': " +
                          std::string(word) + " = " + std::to_string(value) + " " + problem + "; " +
                          std::string(advice));
    }

    // count * each, or fail naming `word` (= count) if the product overflows 64 bits.
    std::uint64_t bytes(std::string_view word, std::uint64_t count, std::uint64_t each) const {
        std::uint64_t n = 0;
        if (__builtin_mul_overflow(count, each, &n))
            fail(word, count, "times the element size of " + std::to_string(each) + " bytes overflows 64 bits");
        return n;
    }

    // Whether [offset, offset + n) lies in the pool (integers only: no pointer is formed).
    bool in_pool(std::uint64_t offset, std::uint64_t n) const noexcept {
        return offset <= pool_.size() && n <= pool_.size() - offset;
    }

    // `word` (= offset) must name a heap block other than the header's own, in one of
    // `allowed` states, whose usable bytes hold `count` (the value of `count_word`) elements
    // of `each` bytes, all inside the pool. Returns the block's state.
    template <class Heap>
    alloc::block_state block(const Heap& heap, std::string_view word, std::uint64_t offset, block_states allowed,
                             std::string_view count_word, std::uint64_t count, std::uint64_t each) const {
        const std::uint64_t needed = bytes(count_word, count, each);
        if (offset == 0) fail(word, offset, "names no block");
        if (!in_pool(offset, 1)) fail(word, offset, "lies outside the pool");
        if (offset == anchor_) fail(word, offset, "names the header's own block");
        const void* p = pool_.base() + offset;
        const auto st = heap.state(p);
        if (!(states(st) & allowed))
            fail(word, offset, std::string("names no block the structure can own (the heap says: ") +
                                   alloc::to_string(st) + ")");
        const std::uint64_t usable = heap.block_size(p);
        if (needed > usable || !in_pool(offset, needed))
            fail(word, offset, "names a block of " + std::to_string(usable) + " usable bytes, too small for " +
                                   std::string(count_word) + " = " + std::to_string(count) + " elements of " +
                                   std::to_string(each) + " bytes");
        return st;
    }

    // The header's own block must be one of kept_states and hold `header_bytes`. Returns its
    // usable bytes, at most those up to the end of the pool.
    template <class Heap>
    std::uint64_t header_block(const Heap& heap, std::uint64_t header_bytes) const {
        const void* p = pool_.base() + anchor_;  // header_in_pool() checked the header lies in the pool
        const auto st = heap.state(p);
        if (!(states(st) & kept_states))
            fail("anchor", anchor_,
                 std::string("names no block a structure can own (the heap says: ") + alloc::to_string(st) + ")");
        const std::uint64_t usable = heap.block_size(p);
        if (usable < header_bytes)
            fail("anchor", anchor_, "names a block of " + std::to_string(usable) + " usable bytes, too small for a header");
        return in_pool(anchor_, usable) ? usable : pool_.size() - anchor_;
    }

    const pmem::pool_ref& pool() const noexcept { return pool_; }
    std::uint64_t anchor() const noexcept { return anchor_; }

private:
    const pmem::pool_ref& pool_;
    std::string_view kind_;
    std::uint64_t anchor_;
};

// The header at pool offset `anchor`, if it can be read at all: 0 means "none" (not damage:
// nothing was created there), a misaligned offset or one whose header would cross the end of
// the pool is damage. Returns the header's address; its words are not checked yet.
template <class Header>
Header* header_in_pool(const pmem::pool_ref& pool, std::string_view kind, std::uint64_t anchor) {
    if (anchor == 0)
        throw error("no " + std::string(kind) + " at pool offset 0 of '" + pool.path().string() + "'; create it first");
    const header_check c(pool, kind, anchor);
    if (anchor % alignof(Header) != 0 || !c.in_pool(anchor, sizeof(Header)))
        c.fail("anchor", anchor, "is not the offset of a " + std::string(kind) + " header in the pool");
    return reinterpret_cast<Header*>(pool.base() + anchor);
}

}  // namespace ferrite::containers
