// ferrite/index/rel_ptr.hpp: an atomic self-relative pointer, the index's node links.
//
// The durable tree (durable_tree.hpp) keeps its nodes in a pool that may be mapped at another
// address on every open, so a node may not hold a raw pointer. atomic_rel_ptr<T> stores the
// distance from its own address to the target in one atomic 64-bit word (0 = null; a node
// never points into itself), like pmem::offset_ptr but atomic, because optimistic readers load
// the links while writers store them. The volatile tree uses the same nodes, so tree-volatile
// and tree-incll differ only in what InCLL adds (one add per followed link in both).
//
// Crash consistency: one aligned 8-byte store per link; it survives the pool being copied or
// mapped elsewhere as long as the link and its target move together (both in one pool).
#pragma once

#include <atomic>
#include <cstdint>

namespace ferrite::index {

template <class T>
class atomic_rel_ptr {
public:
    atomic_rel_ptr() noexcept = default;
    atomic_rel_ptr(const atomic_rel_ptr&) = delete;
    atomic_rel_ptr& operator=(const atomic_rel_ptr&) = delete;

    T* load(std::memory_order order) const noexcept { return decode(off_.load(order)); }
    void store(T* p, std::memory_order order) noexcept { off_.store(encode(p), order); }
    // The stored distance, for recovery's validation (which checks the target before use).
    std::int64_t raw(std::memory_order order = std::memory_order_relaxed) const noexcept { return off_.load(order); }

private:
    T* decode(std::int64_t d) const noexcept {
        if (d == 0) return nullptr;
        return reinterpret_cast<T*>(reinterpret_cast<std::intptr_t>(this) + d);
    }
    std::int64_t encode(const T* p) const noexcept {
        if (p == nullptr) return 0;
        return static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(p) - reinterpret_cast<std::intptr_t>(this));
    }

    std::atomic<std::int64_t> off_{0};
};

}  // namespace ferrite::index
