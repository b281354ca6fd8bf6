// ferrite/alloc/confirm_table.hpp: the persistent references behind the confirm protocol.
//
// Paper: PFC thesis section 5.3, L720-790: ALLOCATE keeps a persistent reference to the new
// block until the caller, having persisted its own pointer to it, calls CONFIRMALLOCATION;
// DEALLOCATE keeps one until CONFIRMDEALLOCATION, and only then is the block freed. After a
// crash the allocator waits until every client has recovered, then frees every unconfirmed
// allocation and completes every unconfirmed deallocation.
//
// Differences from the paper: the paper does not say where the references live. Here they
// are a fixed table of slots in the heap region (its size chosen at create, default 64), one
// 8-byte word each: the block's heap offset (64-byte aligned, so the low bits are free) with
// the kind in bits 0-1. A full table makes allocate/deallocate throw confirm_table_full and
// change nothing: at most slot_count (de)allocations can be unconfirmed at once.
//
// Crash consistency
//   persistent: the slot words. Invariant (checked by buddy_heap::check, and validated at
//   open and recover() before anything is written: buddy_heap.hpp, "Validation"): a
//   non-empty slot is of a known kind and names a live block, and no block is named twice.
//   * Setting an allocation slot is one of the words of the allocating REQUEST, and clearing
//     a deallocation slot one of the words of the freeing RELEASE (undo_log.hpp): a block and
//     its slot change together or not at all.
//   * confirm_allocation clears a slot, deallocate sets (or re-kinds) one: a single aligned
//     8-byte store, pwb, pfence (PP) - atomic without a log.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace ferrite::alloc {

enum class slot_kind : std::uint64_t { empty = 0, allocation = 1, deallocation = 2 };

inline constexpr std::uint64_t slot_kind_mask = 3;

inline constexpr std::uint64_t make_slot(std::uint64_t block_offset, slot_kind k) noexcept {
    return block_offset | static_cast<std::uint64_t>(k);
}
inline constexpr slot_kind kind_of(std::uint64_t slot) noexcept {
    return static_cast<slot_kind>(slot & slot_kind_mask);
}
inline constexpr std::uint64_t block_of(std::uint64_t slot) noexcept { return slot & ~slot_kind_mask; }

// Searches over the slot words of one heap. Callers hold the heap's lock.
class confirm_table {
public:
    confirm_table(std::uint64_t* slots, std::uint64_t count) noexcept : slots_(slots), count_(count) {}

    std::uint64_t count() const noexcept { return count_; }
    std::uint64_t* slot(std::uint64_t i) const noexcept { return &slots_[i]; }

    // The slot naming this block (any kind), if one does.
    std::optional<std::uint64_t> find(std::uint64_t block_offset) const noexcept {
        for (std::uint64_t i = 0; i < count_; ++i)
            if (slots_[i] != 0 && block_of(slots_[i]) == block_offset) return i;
        return std::nullopt;
    }

    // The lowest empty slot, skipping slots with reserved[i] != 0 (few slots are in use at
    // once, so the searches stay in the table's first line).
    std::optional<std::uint64_t> find_empty(const std::vector<char>& reserved) const noexcept {
        for (std::uint64_t i = 0; i < count_; ++i)
            if (slots_[i] == 0 && !reserved[i]) return i;
        return std::nullopt;
    }

    // Store one slot word durably (confirm_allocation, deallocate): see the header comment.
    void store(std::uint64_t i, std::uint64_t value) noexcept;

private:
    std::uint64_t* slots_;
    std::uint64_t count_;
};

}  // namespace ferrite::alloc
