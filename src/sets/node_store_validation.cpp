// The node store's validation (src/sets/node_store_validation.hpp, node_store.hpp).
//
// Offsets read from the media are compared as integers (in the heap's arena, aligned,
// inside the pool) before a pointer is formed from them, and heap blocks are judged by the
// heap's own observers (state(), block_size()). Each list walk is bounded by the number of
// areas the arena can hold and refuses an area seen before, so any bytes end it.
#include <bit>
#include <string>
#include <unordered_set>

#include "ferrite/error.hpp"
#include "node_store_validation.hpp"

namespace ferrite::sets::detail {
namespace {

std::string num(std::uint64_t v) { return std::to_string(v); }

[[noreturn]] void damaged(std::uint64_t anchor, const std::string& what) {
    throw_damaged(pool_errc::damaged_object, "node_store", "",
                  "header at pool offset " + num(anchor) + ": " + what +
                      "; nothing was written (restore the pool from a copy)");
}

bool kept(alloc::block_state s) noexcept {
    return s == alloc::block_state::live || s == alloc::block_state::allocation_pending;
}

const char* heap_says(alloc::block_state s) noexcept { return alloc::to_string(s); }

}  // namespace

std::uint64_t heap_in_pool(const pmem::pool_ref& pool, const alloc::buddy_heap& heap) {
    return alloc::heap_in_pool(pool, heap, "node_store");
}

checked_store check_store(const pmem::pool_ref& pool, const alloc::buddy_heap& heap, std::uint64_t anchor) {
    if (anchor == 0)
        throw error("no node_store at pool offset 0 of '" + pool.path().string() + "'; create it first");
    const std::uint64_t in_pool = heap_in_pool(pool, heap);
    const auto& g = heap.geometry();
    checked_store c;
    // The header block.
    if (anchor % 64 != 0 || anchor < in_pool || anchor - in_pool < g.arena_offset ||
        anchor - in_pool >= g.arena_offset + g.arena_size)
        damaged(anchor, "the anchor is not the offset of a block of the heap");
    const std::uint64_t h = anchor - in_pool;
    const void* hb = heap.at(h);
    if (const auto st = heap.state(hb); !kept(st))
        damaged(anchor, std::string("the anchor names no block a node store can own (the heap says: ") +
                            heap_says(st) + ")");
    if (heap.block_size(hb) < sizeof(node_store_header))
        damaged(anchor, "the anchor names a block of " + num(heap.block_size(hb)) + " bytes, too small for a header");
    c.header = static_cast<node_store_header*>(const_cast<void*>(hb));  // written only by an opened store
    c.header_offset = h;
    if (heap.state(hb) == alloc::block_state::allocation_pending) c.pending.push_back(h);
    const auto& id = c.header->identity;
    if (id.magic != node_store_magic)
        damaged(anchor, "bad magic " + num(id.magic) + ": no node store here, or its header is damaged");
    if (id.checksum != id.compute_checksum()) damaged(anchor, "the header's checksum does not match its words");
    if (id.version != node_store_version)
        damaged(anchor, "format version " + num(id.version) + ", this build reads version " + num(node_store_version));
    if (id.list_count != area_list_count)
        damaged(anchor, "list_count = " + num(id.list_count) + ", not " + num(area_list_count));
    if (id.reserved != 0) damaged(anchor, "a reserved word is " + num(id.reserved) + ", not 0");
    if (!std::has_single_bit(id.area_bytes) || id.area_bytes < min_area_bytes || id.area_bytes > heap.max_allocation())
        damaged(anchor, "area_bytes = " + num(id.area_bytes) + " is not a power of two from " + num(min_area_bytes) +
                            " to the heap's largest block (" + num(heap.max_allocation()) + ")");
    if (std::uint64_t{id.key_size} + id.value_size > node_size)
        damaged(anchor, "key_size + value_size = " + num(std::uint64_t{id.key_size} + id.value_size) +
                            " bytes do not fit in a node of " + num(node_size));
    c.shape.algorithm = id.algorithm;
    c.shape.layout = id.layout;
    c.shape.key_size = id.key_size;
    c.shape.value_size = id.value_size;
    c.shape.area_bytes = id.area_bytes;

    // The lists.
    const std::uint64_t area_bytes = id.area_bytes;
    const std::uint64_t max_areas = g.arena_size / area_bytes;
    const std::uint32_t nodes = static_cast<std::uint32_t>(area_bytes / node_size - 1);
    std::unordered_set<std::uint64_t> seen;
    for (std::uint32_t i = 0; i < area_list_count; ++i) {
        std::uint64_t off = c.header->heads[i];
        std::string from = "list " + num(i) + "'s head";
        while (off != 0) {
            const std::string area = "list " + num(i) + ": area at heap offset " + num(off) + " (named by " + from + ")";
            if (c.areas.size() >= max_areas)
                damaged(anchor, area + " is beyond the " + num(max_areas) + " areas the heap can hold (a cycle?)");
            if (off < g.arena_offset || off - g.arena_offset >= g.arena_size || (off - g.arena_offset) % area_bytes != 0)
                damaged(anchor, area + " is not an area position of the heap (aligned to " + num(area_bytes) +
                                    " bytes in its arena)");
            if (off == h) damaged(anchor, area + " is the header's own block");
            if (!seen.insert(off).second)
                damaged(anchor, area + " appears twice (a cycle, or two lists share it)");
            const void* block = heap.at(off);
            const auto st = heap.state(block);
            if (!kept(st))
                damaged(anchor, area + " is not a live block of the heap (the heap says: " + heap_says(st) +
                                    "): a wrong heap, a damaged pool, or the heap finished its recovery before "
                                    "node_store::recover()");
            if (heap.block_size(block) != area_bytes)
                damaged(anchor, area + " is a heap block of " + num(heap.block_size(block)) + " bytes, not " +
                                    num(area_bytes));
            const auto* a = static_cast<const area_header*>(block);
            if (a->magic != area_magic) damaged(anchor, area + " has a bad magic " + num(a->magic));
            if (a->checksum != a->compute_checksum()) damaged(anchor, area + ": its header's checksum does not match");
            if (a->owner != h)
                damaged(anchor, area + " belongs to the node store at heap offset " + num(a->owner) + ", not this one (" +
                                    num(h) + ")");
            if (a->list != i) damaged(anchor, area + " says it is on list " + num(a->list));
            if (a->nodes != nodes)
                damaged(anchor, area + " says it holds " + num(a->nodes) + " nodes, not " + num(nodes));
            c.areas.push_back(off);
            if (st == alloc::block_state::allocation_pending) c.pending.push_back(off);
            from = "the area at heap offset " + num(off);
            off = a->next;
        }
    }
    return c;
}

}  // namespace ferrite::sets::detail
