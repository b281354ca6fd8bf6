// ferrite/containers/dfc_handle.hpp: what the DFC containers (dfc_stack, dfc_queue, dfc_deque)
// share around their engine: construction in a region, recovery and detectability queries,
// operations that push or pop one 64-bit word, and the walk along the committed links.
//
// A container derives from dfc_handle<itself, T, Trace> and holds the engine as its member
// `e_` (the engine is never a base, docs/design.md); the handle reaches it through the derived
// class, whose engine type is complete by the time any of these functions is instantiated.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "ferrite/combining/dfc.hpp"

namespace ferrite::containers {

namespace dfc_detail {
template <class T>
std::uint64_t to_word(const T& v) noexcept {
    std::uint64_t w = 0;
    std::memcpy(&w, &v, sizeof(T));
    return w;
}
template <class T>
T from_word(std::uint64_t w) noexcept {
    T v;
    std::memcpy(&v, &w, sizeof(T));
    return v;
}
}  // namespace dfc_detail

template <class Derived, class T, class Trace>
class dfc_handle {
public:
    using recovered_op = combining::dfc_recovered_op;

    // ---- constructors ----------------------------------------------------------------
    static constexpr std::size_t required_bytes(unsigned threads, std::uint64_t capacity) noexcept {
        return Derived::engine_type::required_bytes(threads, capacity);
    }
    // A new empty container in `bytes` bytes at `region` (64-byte aligned) for thread ids
    // 0..threads-1, holding as many nodes as fit (see required_bytes).
    static Derived create(void* region, std::size_t bytes, unsigned threads, combining::dfc_options o = {},
                          Trace t = {}) {
        return Derived(Derived::engine_type::create(region, bytes, threads, o, std::move(t)));
    }
    // The container created earlier at `region`, recovered (see combining::dfc::open).
    // Throws damaged_pool (kind damaged_object, region the kind name), writing nothing, if
    // the region fails validation (combining/dfc_validation.hpp).
    static Derived open(void* region, std::size_t bytes, combining::dfc_options o = {}, Trace t = {}) {
        return Derived(Derived::engine_type::open(region, bytes, o, std::move(t)));
    }

    // ---- read-only checks (catalog, `ferrite pool check`): no recovery, nothing written --
    // Every check open() and recovery make (header, chunk table against `heap`, epoch, root
    // copies, thread records, links); throws what open() would. `heap` (null: the
    // structure never grew) may be opened read-only and not yet recovered.
    static void validate(const void* region, std::size_t bytes, const alloc::buddy_heap* heap = nullptr) {
        combining::dfc_validation::all<typename Derived::structure>(region, bytes, heap);
    }
    // The blocks the structure owns: `region` first, then the heap block of every grown
    // node chunk (chunk order), so that a caller can prove no two objects share a block.
    // Checks the header and the chunk table first (the same errors as validate()).
    static std::vector<const void*> owned_blocks(const void* region, std::size_t bytes,
                                                 const alloc::buddy_heap* heap = nullptr) {
        return combining::dfc_validation::owned_blocks<typename Derived::structure>(region, bytes, heap);
    }

    // ---- recovery and detectability ----------------------------------------------------
    void recover() { engine().recover(); }
    // What became of `tid`'s latest operation (recover() first: a no-op after open()).
    recovered_op recover(unsigned tid) {
        engine().recover();
        return engine().recovered(tid);
    }
    std::uint64_t next_seq(unsigned tid) const { return engine().next_seq(tid); }
    // Thread ids are 0..threads()-1, fixed at create.
    unsigned threads() const noexcept { return engine().threads(); }

    // ---- thread ids: one thread at a time ----------------------------------------------
    // A thread's first operation as `tid` claims it; while that thread lives, an operation
    // of another thread as `tid` throws usage_error and does nothing (two threads on one id
    // would lose operations). The claim ends when the thread exits, or when it calls
    // release(tid), after which any thread may take tid (handing ids between the threads of
    // a pool, say). release() of a free tid does nothing; of one held by another thread it
    // throws usage_error. Claims are volatile and belong to this handle's engine: every
    // thread given the same catalog object shares them; a reopened structure starts free.
    void release(unsigned tid) { engine().release(tid); }

    auto& engine() noexcept { return static_cast<Derived&>(*this).e_; }
    const auto& engine() const noexcept { return static_cast<const Derived&>(*this).e_; }
    // The engine's record (combining/stats.hpp: the one every combining container reports);
    // mean_batch_size() reads it.
    combining::combining_stats stats() const noexcept { return engine().stats(); }
    double mean_batch_size() const noexcept { return stats().mean_batch_size(); }

protected:
    // Operation `name` carrying v; false if the node pool is exhausted (no effect). Both
    // throw usage_error, changing nothing, for a thread id the structure does not have or
    // one another thread holds.
    bool push_word(unsigned tid, std::uint64_t name, const T& v) {
        return engine().apply(tid, name, dfc_detail::to_word(v)).status == combining::dfc_status::ack;
    }
    // Operation `name` that removes an element: nullopt if there was none.
    std::optional<T> pop_word(unsigned tid, std::uint64_t name) {
        const auto r = engine().apply(tid, name, 0);
        if (r.status != combining::dfc_status::value) return std::nullopt;
        return dfc_detail::from_word<T>(r.value);
    }
    // The elements along `next` from root 0, up to root 1 if `until_root1` (quiescent only).
    std::vector<T> walk(bool until_root1) const {
        const auto& e = engine();
        e.require_open();
        std::vector<T> out;
        const std::uint64_t last = until_root1 ? e.root(1) : 0;
        for (std::uint64_t n = e.root(0); n != 0 && e.contains(n) && out.size() <= e.capacity(); n = e.node(n).next) {
            out.push_back(dfc_detail::from_word<T>(e.node(n).param));
            if (until_root1 && n == last) break;
        }
        return out;
    }
};

}  // namespace ferrite::containers
