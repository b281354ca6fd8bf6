// Geometry and identity checksum of a heap region (see ferrite/alloc/heap_layout.hpp).
#include "ferrite/alloc/heap_layout.hpp"

#include <cstddef>
#include <cstring>

#include "ferrite/alloc/confirm_table.hpp"
#include "ferrite/alloc/undo_log.hpp"

namespace ferrite::alloc {

heap_geometry compute_geometry(std::uint64_t region_size, std::uint64_t slot_count) noexcept {
    heap_geometry g;
    g.region_size = region_size;
    g.slot_count = slot_count;
    if (region_size < 2 * granule) return g;
    // The log is sized for the largest order the region could hold: a little generous.
    g.log_capacity = log_capacity_for(floor_log2(region_size));
    g.log_offset = align_up(sizeof(heap_header), 64);
    const auto entries_end = g.log_offset + sizeof(log_control) + 2 * g.log_capacity * sizeof(log_entry);
    g.slots_offset = align_up(entries_end, 64);
    g.map_offset = align_up(g.slots_offset + slot_count * 8, 64);
    if (g.map_offset >= region_size) return g;
    const auto rest = region_size - g.map_offset;
    // arena + align_up(arena / 64, 64) <= rest, arena a multiple of 64.
    if (rest < 2 * granule) return g;
    std::uint64_t arena = (rest - 64) / (granule + 1) * granule;
    while (arena > 0 && align_up(arena / granule, 64) + arena > rest) arena -= granule;
    if (arena < granule) return g;
    g.arena_offset = g.map_offset + align_up(arena / granule, 64);
    g.arena_size = arena;
    g.max_order = floor_log2(arena);
    return g;
}

std::uint64_t identity_checksum(const heap_identity& id) noexcept {
    const auto* p = reinterpret_cast<const unsigned char*>(&id.version);
    const auto* end = reinterpret_cast<const unsigned char*>(&id.checksum);
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (; p < end; ++p) {
        h ^= *p;
        h *= 0x100000001b3ull;
    }
    return h;
}

bool loggable_word(const heap_geometry& g, std::uint64_t off) noexcept {
    if (off % 8 != 0) return false;
    const auto heads = offsetof(heap_header, free_heads);
    if (off >= heads + 8 * min_order && off <= heads + 8 * g.max_order) return true;
    if (off >= g.slots_offset && off - g.slots_offset < 8 * g.slot_count) return true;
    if (off >= g.map_offset && off - g.map_offset < align_up(g.arena_size / granule, 8)) return true;
    return off >= g.arena_offset && off - g.arena_offset < g.arena_size &&
           (off - g.arena_offset) % granule < sizeof(free_links);
}

}  // namespace ferrite::alloc
