// ferrite/alloc/name_directory.hpp: the pool's directory of named objects.
//
// A pool holds several structures (vectors, stacks...). Each lives in heap blocks and is
// reachable from one persistent word, its *anchor*, which the structure's create() fills in as
// its commit point. The directory gives every object a name and an anchor word, so a program
// finds its structures by name ("prices", "orders") instead of laying out a root of its own.
//
// Layout: a chain of 4 KiB blocks from the pool's heap (alloc::buddy_heap); the pool header
// registers the first (pool::register_catalog). Line 0 of a block: magic, next block, entry
// capacity (63; fewer in test builds). Lines 1..63: one entry each, a whole cache line:
//     name (up to 39 bytes, NUL-padded) | element size (32 bits) | element type tag (32 bits)
//     | element alignment | kind | anchor
// `kind` (nonzero) says what the anchor refers to and marks the entry in use. The type tag
// identifies the element type beyond its size and alignment (containers/type_tag.hpp); 0 in
// entries written before tags existed (the high half of a 64-bit size, always 0 then), which
// match any type of their size and alignment.
//
// Never trusting the media: validate() (called by every open and by `ferrite pool check`)
// checks every block of the chain (inside the pool, aligned, a live 4 KiB heap block, magic,
// capacity, no loop) and every entry in use (NUL-terminated non-empty name, no duplicate,
// alignment a power of two, element size, anchor inside the pool); a damaged catalog throws
// damaged_pool(damaged_catalog) naming the block or entry, before anything is written.
//
// Not from a paper: the PFC thesis anchors its vector in the pool root; ferrite adds names so
// that "several vectors per pool" needs no root layout from the user.
//
// Crash consistency. Persistent: the blocks and the pool header's catalog word.
//   add: the entry's fields are written in one line, kind last but one, anchor (0) last;
//     nothing is written back. The entry becomes durable when the caller's create() writes
//     the anchor and persists it (pwb of the anchor's line, pfence: the PP of both): an
//     entry means nothing without its object. Stores to one line persist in program order
//     (docs/references.md, axiom 1), so a crash leaves a free entry (kind 0), a named one
//     with no object (anchor 0, which open-or-create then creates), or a complete one.
//     Flush mutation testing showed that a pwb + pfence of the entry alone was redundant.
//   a new block: allocated from the heap (pending), formatted, pwb + pfence; then linked
//     (the pool's roots entry for the first block, the previous block's `next` otherwise),
//     pwb + pfence (PP); then its allocation is confirmed. recover() confirms every block of
//     the chain again (idempotent), so a crash between link and confirm loses nothing, and
//     an unlinked block is freed by the heap's finish_recovery().
// Names are never removed in this version (the structures have no destroy yet).
//
// Concurrency: a directory object is safe to share between threads (one spin lock); two objects
// over one pool in one process are not (each would add entries without seeing the other's
// in-flight ones): open one per pool.
//
//   auto heap = ferrite::alloc::buddy_heap::open(pool, pool.heap_offset());
//   auto dir = ferrite::alloc::name_directory::open_or_create(pool, heap);
//   auto& e = dir.find_or_add("prices", {kind, sizeof(T), alignof(T)});
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>

#include "ferrite/alloc/spin_lock.hpp"
#include <string>
#include <string_view>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/pmem/pool.hpp"

namespace ferrite::alloc {

inline constexpr std::size_t max_object_name = 39;  // bytes, without the NUL

// What an entry's anchor refers to, and the element type it was created with.
struct object_type {
    std::uint32_t kind = 0;          // nonzero; owned by the layer that defines the structure
    std::uint32_t element_align = 0;
    std::uint32_t element_size = 0;
    std::uint32_t type_tag = 0;      // 0: untagged (entries of older pools)
    bool operator==(const object_type&) const = default;
    // Whether an entry of this (stored) type can be opened as `asked`: same kind, size and
    // alignment, and the same tag unless the stored entry predates tags.
    bool accepts(const object_type& asked) const noexcept {
        return kind == asked.kind && element_size == asked.element_size &&
               element_align == asked.element_align && (type_tag == 0 || type_tag == asked.type_tag);
    }
};

struct alignas(64) directory_entry {
    char name[max_object_name + 1];
    std::uint32_t element_size;
    std::uint32_t type_tag;
    std::uint32_t element_align;
    std::uint32_t kind;  // written last: nonzero = in use (the entry's commit point)
    std::uint64_t anchor;

    std::string_view name_view() const noexcept;
    object_type type() const noexcept { return {kind, element_align, element_size, type_tag}; }
};
static_assert(sizeof(directory_entry) == 64);

struct directory_options {
    // Entries a new block holds (1..63). Fewer than 63 only to exercise block growth
    // (crash targets, tests: the layout is the same, the rest of the block stays unused).
    std::uint32_t entries_per_block = 63;
};

class name_directory {
public:
    // The pool's directory, creating (and registering) it if the pool has none yet. Throws
    // ferrite::error if the registered block is not a directory (a damaged pool), and
    // std::bad_alloc if the heap cannot hold a new block.
    // Validates the chain and every entry (validate()) when the pool has one.
    static name_directory open_or_create(pmem::pool_ref pool, buddy_heap& heap, directory_options options = {});

    name_directory(name_directory&&) noexcept = default;

    // The entry named `name`, nullptr if none. Throws usage_error for an invalid name.
    directory_entry* find(std::string_view name);
    // The entry named `name` if it exists (its type must accept `type`, else
    // pool_error(type_mismatch) says what it holds), else a new entry with a 0 anchor,
    // durable once the caller persists its anchor (a structure's create() does).
    directory_entry& find_or_add(std::string_view name, object_type type);
    // Undo find_or_add's new entry when the object it was for could not be created: the
    // entry is freed (kind 0) if its anchor is still 0. No write-back: the add was never
    // made durable either, and a crash before this store leaves a named entry without an
    // object, which the next open-or-create creates.
    void remove_unpublished(directory_entry& e) noexcept;
    // Every entry in use, in directory order (names and types for tools).
    std::vector<directory_entry> entries() const;

    // After a crash, between the heap's recover() and its finish_recovery(): confirm every
    // block of the chain (see the header comment). The objects recover themselves.
    void recover();

    // The blocks of the chain (heap blocks), for checks and tests.
    std::vector<const void*> blocks() const;
    // Every check described in the header comment; throws damaged_pool(damaged_catalog).
    void validate() const;

private:
    name_directory(pmem::pool_ref pool, buddy_heap& heap, directory_options options)
        : pool_(std::move(pool)), heap_(&heap), options_(options), lock_(std::make_unique<spin_lock>()) {}
    struct block;
    block* first() const;
    block* next(const block* b) const;
    block* add_block(block* last);
    block* checked(std::uint64_t offset) const;
    directory_entry* find_locked(std::string_view name) const;

    [[noreturn]] void damaged(std::string_view entry, const std::string& what) const;

    pmem::pool_ref pool_;
    buddy_heap* heap_;
    directory_options options_;
    std::unique_ptr<spin_lock> lock_;  // volatile: spins with pmem::wait_hint (crash simulator)
};

}  // namespace ferrite::alloc
