// ferrite/sets/soft_pnode.hpp: SOFT's persistent node (PNode): its line layout, the writes
// that create, supersede and delete it, and the rule that says whether it is a member.
//
// Paper: durable sets (Zuriel et al., OOPSLA 2019), SOFT, "PNode" (L306-383, Listings 6-7).
// A PNode lives in a node_store slot (one 64-byte line) and is the only persistent state of
// a SOFT member: no link is persisted. Its three flags flip polarity on every reuse: a free
// PNode has valid_start == valid_end == deleted == q; alloc hands out p = !q; create writes
// valid_start := p, the payload, valid_end := p; delete writes deleted := p. Stores to one
// line persist in program order (docs/references.md, axiom 1), so a persisted valid_end
// implies a persisted payload.
//
// Layout (64 bytes):
//   u8 valid_start, u8 valid_end, u8 deleted, u8 superseded, u32 pad,
//   u64 superseded_by   (pool offset of the newer PNode) | that PNode's polarity in bit 0
//   u64 payload[6]      key bytes, then value bytes (sizeof(K) + sizeof(V) <= 40)
//
// What differs from the paper:
//   * superseded / superseded_by: an in-place assignment (insert_or_assign, soft_list.hpp)
//     makes a new PNode Y for the key and marks the old one X superseded by Y; X stops being
//     a member when Y is complete (valid with the recorded polarity and the same key), so the
//     switch is decided by one line, Y's. The paper has no update.
//   * alloc (prepare below) clears superseded and superseded_by before the PNode is
//     published (plain stores, no write-back: they precede create's stores in the line, so
//     any persisted create carries them); create never touches them, because a late helper
//     re-running create on a PNode that was meanwhile superseded must not undo that.
//   * Fields are plain integers accessed through std::atomic_ref (helpers write the same
//     values concurrently), so the line is an implicit-lifetime object in the slot.
//
// Member at recovery iff valid_start == valid_end && deleted != valid_start && !(superseded
// && the PNode named by superseded_by is complete). A blank slot (all zero) is valid and
// deleted: not a member. Dead PNodes are normalised before reuse (soft_recovery.hpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "ferrite/error.hpp"
#include "ferrite/pmem/primitives.hpp"
#include "ferrite/sets/node_store.hpp"
#include "ferrite/sets/split_order.hpp"

namespace ferrite::sets::soft {

inline constexpr std::uint32_t algorithm_id = 2;  // node_store_shape::algorithm

struct alignas(node_size) pnode {
    // persistent
    std::uint8_t valid_start;
    std::uint8_t valid_end;
    std::uint8_t deleted;
    std::uint8_t superseded;
    std::uint32_t pad;
    std::uint64_t superseded_by;
    std::uint64_t payload[6];
};
static_assert(sizeof(pnode) == node_size && std::is_trivially_copyable_v<pnode>,
              "a SOFT PNode is exactly one node_store slot");

inline pnode* as_pnode(node_line* line) noexcept { return reinterpret_cast<pnode*>(line); }
inline node_line* as_line(pnode* p) noexcept { return reinterpret_cast<node_line*>(p); }

namespace detail {
inline std::uint8_t load8(const std::uint8_t& f) noexcept {
    return std::atomic_ref<std::uint8_t>(const_cast<std::uint8_t&>(f)).load(std::memory_order_acquire);
}
inline void store8(std::uint8_t& f, std::uint8_t v, std::memory_order o = std::memory_order_release) noexcept {
    std::atomic_ref<std::uint8_t>(f).store(v, o);
}
inline std::uint64_t load64(const std::uint64_t& w) noexcept {
    return std::atomic_ref<std::uint64_t>(const_cast<std::uint64_t&>(w)).load(std::memory_order_acquire);
}
inline void store64(std::uint64_t& w, std::uint64_t v, std::memory_order o = std::memory_order_relaxed) noexcept {
    std::atomic_ref<std::uint64_t>(w).store(v, o);
}
inline std::uint8_t bit(bool b) noexcept { return b ? 1 : 0; }
}  // namespace detail

// What the flags say (one read of each).
struct pnode_flags {
    std::uint8_t valid_start, valid_end, deleted, superseded;
    std::uint64_t superseded_by;
    bool valid() const noexcept { return valid_start == valid_end; }
    bool live() const noexcept { return valid() && deleted != valid_start; }  // before superseding
    bool well_formed() const noexcept {
        return valid_start <= 1 && valid_end <= 1 && deleted <= 1 && superseded <= 1;
    }
};

inline pnode_flags read_flags(const pnode* p) noexcept {
    return {detail::load8(p->valid_start), detail::load8(p->valid_end), detail::load8(p->deleted),
            detail::load8(p->superseded), detail::load64(p->superseded_by)};
}

[[noreturn]] inline void damaged_pnode(std::uint64_t at, const std::string& what) {
    throw_damaged(pool_errc::damaged_object, "soft set", "",
                  "the PNode at pool offset " + std::to_string(at) + " " + what +
                      "; the set cannot be opened (restore the pool from a copy)");
}

// The rules every PNode slot passes before recovery uses it, typed (soft_recovery.hpp
// classify) or not (node_check.cpp, for `pool check`): each flag byte 0 or 1; a superseded
// PNode names, less its polarity bit, a node slot of this set other than itself.
// `is_slot(offset)` says whether an offset is a node slot. `at`: this PNode's pool offset.
// Returns the target's offset (0: not superseded); damaged_pnode otherwise.
template <class IsSlot>
std::uint64_t checked_supersede_target(const pnode_flags& f, std::uint64_t at, IsSlot&& is_slot) {
    if (!f.well_formed())
        damaged_pnode(at, "has flags " + std::to_string(f.valid_start) + "/" + std::to_string(f.valid_end) + "/" +
                              std::to_string(f.deleted) + "/" + std::to_string(f.superseded) + ", not 0 or 1");
    if (f.superseded == 0) return 0;
    const std::uint64_t target = f.superseded_by & ~std::uint64_t{1};
    if (!is_slot(target))
        damaged_pnode(at, "is superseded by offset " + std::to_string(target) + ", which is no node slot of this set");
    if (target == at) damaged_pnode(at, "is superseded by itself");
    return target;
}

template <class K, class V>
struct payload_io {
    static constexpr std::size_t value_bytes = std::is_empty_v<V> ? 0 : sizeof(V);
    static constexpr std::size_t words = (sizeof(K) + value_bytes + 7) / 8;
    static_assert(words <= 6);

    static void write(pnode* p, const K& key, const V& value) noexcept {
        std::uint64_t buf[6] = {};
        std::memcpy(buf, &key, sizeof(K));
        if constexpr (value_bytes != 0)
            std::memcpy(reinterpret_cast<unsigned char*>(buf) + sizeof(K), &value, value_bytes);
        for (std::size_t i = 0; i < words; ++i) detail::store64(p->payload[i], buf[i], std::memory_order_release);
    }
    static K key(const pnode* p) noexcept {
        std::uint64_t buf[6];
        for (std::size_t i = 0; i < words; ++i) buf[i] = detail::load64(p->payload[i]);
        K k;
        std::memcpy(&k, buf, sizeof(K));
        return k;
    }
    static V value(const pnode* p) noexcept {
        V v{};
        if constexpr (value_bytes != 0) {
            std::uint64_t buf[6];
            for (std::size_t i = 0; i < words; ++i) buf[i] = detail::load64(p->payload[i]);
            std::memcpy(&v, reinterpret_cast<const unsigned char*>(buf) + sizeof(K), value_bytes);
        }
        return v;
    }
    static bool same_key(const pnode* p, const K& k) noexcept {
        const K mine = key(p);
        return keys_equal(mine, k);
    }
};

// alloc (paper L1-3 of Listing 7): the polarity this life uses. Also clears superseded and
// superseded_by (see the header comment); called by the allocating thread before it
// publishes the node, so helpers' later stores to this line follow these in coherence order.
inline bool prepare(pnode* p) noexcept {
    detail::store8(p->superseded, 0, std::memory_order_relaxed);
    detail::store64(p->superseded_by, 0);
    return detail::load8(p->valid_start) == 0;
}

// create (Listing 7 L5-11) without its fence: valid_start, payload, valid_end, pwb.
// Idempotent: helpers run it with the same arguments. The caller fences.
template <class K, class V>
void create(pnode* p, const K& key, const V& value, bool polarity) noexcept {
    detail::store8(p->valid_start, detail::bit(polarity), std::memory_order_relaxed);
    // The payload stores are release stores (the listing's release fence, L7): neither the
    // compiler nor the CPU moves valid_start after them, so the line's program order, the
    // order its stores persist in, is valid_start, payload, valid_end.
    payload_io<K, V>::write(p, key, value);
    detail::store8(p->valid_end, detail::bit(polarity));
    pmem::pwb(p);  // this line; durable at the caller's fence
}

// destroy (Listing 7 L14-16) without its fence.
inline void mark_deleted(pnode* p, bool polarity) noexcept {
    detail::store8(p->deleted, detail::bit(polarity));
    pmem::pwb(p);  // durable at the caller's fence
}

// X superseded by the PNode at `target` (pool offset | its polarity). superseded_by first:
// one line, so a persisted superseded == 1 carries its target.
inline void supersede(pnode* p, std::uint64_t target) noexcept {
    detail::store64(p->superseded_by, target, std::memory_order_relaxed);
    detail::store8(p->superseded, 1);
    pmem::pwb(p);  // durable at the caller's fence
}

}  // namespace ferrite::sets::soft
