// ferrite/containers/dfc_handle.hpp: what the DFC containers (dfc_stack, dfc_queue, dfc_deque)
// share around their engine: construction in a region, recovery and detectability queries,
// operations that push or pop one 64-bit word, and the walk along the committed links.
//
// A container derives from dfc_handle<itself, T, Trace> and holds the engine as its member
// `e_` (the engine is never a base, DESIGN.md); the handle reaches it through the derived
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
    static Derived open(void* region, std::size_t bytes, combining::dfc_options o = {}, Trace t = {}) {
        return Derived(Derived::engine_type::open(region, bytes, o, std::move(t)));
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

    auto& engine() noexcept { return static_cast<Derived&>(*this).e_; }
    const auto& engine() const noexcept { return static_cast<const Derived&>(*this).e_; }
    double mean_batch_size() const noexcept { return engine().stats().mean_batch_size(); }

protected:
    // Operation `name` carrying v; false if the node pool is exhausted (no effect). Both
    // throw usage_error, changing nothing, for a thread id the structure does not have.
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
