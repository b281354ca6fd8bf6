// Introspection of a buddy heap: usage per order, the block list, and the consistency check
// behind `ferrite pool check` (see ferrite/alloc/buddy_heap.hpp). Read only.
#include <algorithm>
#include <bit>
#include <vector>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/error.hpp"

namespace ferrite::alloc {

namespace {

// A bit per granule of the arena (check()).
class granule_bits {
public:
    explicit granule_bits(std::uint64_t n) : words_((n + 63) / 64, 0) {}
    void set(std::uint64_t i) noexcept { words_[i / 64] |= bit(i); }
    bool test(std::uint64_t i) const noexcept { return (words_[i / 64] & bit(i)) != 0; }
    bool test_and_set(std::uint64_t i) noexcept {
        const bool was = test(i);
        set(i);
        return was;
    }
    // f(i) for every i set here and not in `other`, ascending.
    template <class F>
    void for_each_set_not_in(const granule_bits& other, F f) const {
        for (std::size_t w = 0; w < words_.size(); ++w)
            for (auto left = words_[w] & ~other.words_[w]; left != 0; left &= left - 1)
                f(w * 64 + static_cast<std::uint64_t>(std::countr_zero(left)));
    }

private:
    static std::uint64_t bit(std::uint64_t i) noexcept { return std::uint64_t{1} << (i % 64); }
    std::vector<std::uint64_t> words_;
};

}  // namespace

heap_usage buddy_heap::usage_locked() const {
    heap_usage u;
    u.max_order = static_cast<unsigned>(geometry_.max_order);
    u.arena_bytes = geometry_.arena_size;
    u.confirm_slots = table_.count();
    const auto end = geometry_.arena_offset + geometry_.arena_size;
    for (auto off = geometry_.arena_offset; off < end;) {
        const auto tag = map_tag(off);
        const unsigned k = tag & order_mask;
        if (!(tag & (free_tag | live_tag)) || k < min_order || k > geometry_.max_order) {
            off += granule;  // damaged map: check() reports it; count what can be counted
            continue;
        }
        const auto size = std::uint64_t{1} << k;
        if (tag & free_tag) {
            ++u.free_blocks[k];
            u.bytes_free += size;
            u.largest_free = std::max(u.largest_free, size);
        } else {
            ++u.live_blocks[k];
        }
        off += size;
    }
    for (std::uint64_t i = 0; i < table_.count(); ++i) {
        const auto kind = kind_of(*table_.slot(i));
        if (kind == slot_kind::allocation) ++u.pending_allocations;
        if (kind == slot_kind::deallocation) ++u.pending_deallocations;
    }
    u.bytes_used = u.arena_bytes - std::min(u.bytes_free, u.arena_bytes);
    u.fragmentation = u.bytes_free ? 1.0 - static_cast<double>(u.largest_free) / static_cast<double>(u.bytes_free) : 0.0;
    return u;
}

heap_usage buddy_heap::usage() const {
    std::lock_guard guard(lock_);
    return usage_locked();
}

std::vector<block_info> buddy_heap::blocks() const {
    std::lock_guard guard(lock_);
    std::unordered_map<std::uint64_t, slot_kind> pending;
    for (std::uint64_t i = 0; i < table_.count(); ++i)
        if (const auto v = *table_.slot(i)) pending[block_of(v)] = kind_of(v);
    std::vector<block_info> out;
    const auto end = geometry_.arena_offset + geometry_.arena_size;
    for (auto off = geometry_.arena_offset; off < end;) {
        const auto tag = map_tag(off);
        const unsigned k = tag & order_mask;
        if (!(tag & (free_tag | live_tag)) || k < min_order || k > geometry_.max_order) {
            off += granule;
            continue;
        }
        block_info b{off, k, block_state::free};
        if (tag & live_tag) {
            const auto it = pending.find(off);
            b.state = it == pending.end()                      ? block_state::live
                      : it->second == slot_kind::allocation ? block_state::allocation_pending
                                                               : block_state::deallocation_pending;
        }
        out.push_back(b);
        off += std::uint64_t{1} << k;
    }
    return out;
}

std::vector<std::string> buddy_heap::check() const {
    std::lock_guard guard(lock_);
    std::vector<std::string> problems;
    const auto add = [&](std::string s) {
        if (problems.size() < 100) problems.push_back(std::move(s));
    };
    const auto& g = geometry_;
    const auto arena_end = g.arena_offset + g.arena_size;
    try {
        (void)log_.armed_entries(g);  // the tag and every entry: O(log)
        if (log_.armed() != op_kind::none)
            add("an operation was interrupted and not rolled back (undo log armed with " +
                std::to_string(log_.armed_count()) + " words): open read-write and call recover()");
    } catch (const heap_error& e) {
        add(std::string("undo log: ") + e.what());
    }

    // One bit per granule, indexed by granule_of(): where the tiling found a free or a live
    // block start, and which blocks the free lists reached. Flat bitmaps, not hash sets: the
    // check runs at every store::open (the rehearsal), over every block of a fragmented heap.
    const auto granules = g.arena_size / granule;
    granule_bits free_start(granules), live_start(granules), on_lists(granules);
    static_assert(std::endian::native == std::endian::little, "the block map's bytes are read in place");
    const auto* map_bytes = reinterpret_cast<const std::uint8_t*>(map_word(0));

    // 1. The map tiles the arena with aligned blocks; two free buddies of one order must
    // have been merged.
    for (auto off = g.arena_offset; off < arena_end;) {
        const auto tag = map_tag(off);
        const unsigned k = tag & order_mask;
        const auto rel = off - g.arena_offset;
        if ((tag & free_tag) && (tag & live_tag)) {
            add("map: block at offset " + std::to_string(off) + " is marked both free and live");
            off += granule;
            continue;
        }
        if (!(tag & (free_tag | live_tag))) {
            add("map: offset " + std::to_string(off) + " is inside no block (no block starts before it covers it)");
            off += granule;
            continue;
        }
        const auto size = std::uint64_t{1} << k;
        if (k < min_order || k > g.max_order || rel % size != 0 || rel + size > g.arena_size) {
            add("map: block at offset " + std::to_string(off) + " has order " + std::to_string(k) +
                ", which is out of range, misaligned or past the arena's end");
            off += granule;
            continue;
        }
        const auto gi = granule_of(off);
        const auto* inner_begin = map_bytes + gi + 1;
        const auto* inner_end = map_bytes + gi + size / granule;
        if (const auto* inner = std::find_if(inner_begin, inner_end, [](std::uint8_t b) { return b != 0; });
            inner != inner_end)
            add("map: offset " + std::to_string(off + static_cast<std::uint64_t>(inner - map_bytes - gi) * granule) +
                " starts a block inside the block of order " + std::to_string(k) + " at " + std::to_string(off));
        if (tag & free_tag) {
            free_start.set(gi);
            const auto buddy_rel = rel ^ size;
            if (k < g.max_order && buddy_rel > rel && buddy_rel + size <= g.arena_size &&
                map_bytes[buddy_rel / granule] == tag)  // the next block in the tiling, free at order k
                add("free buddies at offsets " + std::to_string(off) + " and " +
                    std::to_string(g.arena_offset + buddy_rel) + " (order " + std::to_string(k) + ") were not merged");
        } else {
            live_start.set(gi);
        }
        off += size;
    }

    // 2. Free lists: in range, aligned, linked both ways, agreeing with the map, acyclic.
    // Every offset is validated before its links are read; a walk stops at the first block
    // seen before (a cycle, or lists sharing blocks) and after at most the number of blocks
    // of its order the arena can hold, so it ends on any bytes: O(arena / granule) in all.
    for (unsigned k = 0; k < order_limit; ++k) {
        auto off = *head(k);
        if (off != 0 && (k < min_order || k > g.max_order)) {
            add("free list of order " + std::to_string(k) + " is not empty, but the heap has no such order");
            continue;
        }
        const auto size = std::uint64_t{1} << k;
        const auto max_nodes = g.arena_size / size;
        std::uint64_t prev = 0, steps = 0;
        while (off != 0) {
            const auto where = [&] { return "free list " + std::to_string(k) + ": block at offset " + std::to_string(off); };
            if (off < g.arena_offset || off >= arena_end || (off - g.arena_offset) % size != 0 ||
                size > arena_end - off) {
                add(where() + " is outside the arena or not aligned to its size");
                break;
            }
            const auto gi = granule_of(off);
            if (on_lists.test_and_set(gi)) {
                add(where() + " is on a free list twice (the list has a cycle or shares blocks with another)");
                break;
            }
            if (++steps > max_nodes) {  // cannot happen without a repeat; a bound all the same
                add("free list " + std::to_string(k) + " is longer than the arena has blocks of its order");
                break;
            }
            if (!free_start.test(gi) || map_bytes[gi] != (free_tag | k))
                add(where() + " is not marked free at order " + std::to_string(k) + " in the map");
            if (links(off)->prev != prev)
                add(where() + " has prev " + std::to_string(links(off)->prev) + ", expected " + std::to_string(prev));
            prev = off;
            off = links(off)->next;
        }
    }
    // 3. Every free block of the tiling is on a list.
    free_start.for_each_set_not_in(on_lists, [&](std::uint64_t gi) {
        add("block at offset " + std::to_string(g.arena_offset + gi * granule) + " (order " +
            std::to_string(map_bytes[gi] & order_mask) + ") is marked free but on no free list (leaked)");
    });

    // 4. Confirm slots name live blocks, each at most once.
    std::unordered_set<std::uint64_t> named;
    for (std::uint64_t i = 0; i < table_.count(); ++i) {
        const auto v = *table_.slot(i);
        if (v == 0) continue;
        const auto kind = kind_of(v);
        const auto off = block_of(v);
        const bool live = off >= g.arena_offset && off < arena_end && (off - g.arena_offset) % granule == 0 &&
                          live_start.test(granule_of(off));
        if (kind != slot_kind::allocation && kind != slot_kind::deallocation)
            add("confirm slot " + std::to_string(i) + " has an unknown kind");
        else if (!live)
            add("confirm slot " + std::to_string(i) + " names offset " + std::to_string(off) +
                ", which is not a live block (a pending block must be allocated)");
        if (!named.insert(off).second)
            add("block at offset " + std::to_string(off) + " is named by two confirm slots");
    }
    return problems;
}

}  // namespace ferrite::alloc
