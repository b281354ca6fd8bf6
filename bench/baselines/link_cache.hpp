// bench/baselines/link_cache.hpp: link-and-persist and the link cache of the log-free data
// structures (David, Dragojevic, Guerraoui, Zablotchi, "Log-Free Concurrent Data Structures",
// USENIX ATC 2018), for the logfree-list / logfree-hash baselines (logfree_set.hpp).
//
// Link words. A link is a std::atomic<uintptr_t> holding a 64-byte aligned node address (0 =
// end of list) and two flag bits: `deleted` (Harris's logical-deletion mark, on a node's own
// next) and `unpersisted` (the link may not be in persistent memory yet).
//
// Link-and-persist (the paper's first technique): a link is changed with one CAS that sets
// the new value *with* the unpersisted bit; the writer then writes the line back (pwb),
// fences (pfence), and clears the bit with a second CAS (which fails harmlessly if the word
// changed meanwhile). A clean link is therefore always durable. A thread that meets an
// unpersisted link and is about to depend on it writes it back itself first (flush_batch:
// one pwb per such link, one pfence for all): helping, not waiting. Cost: 1 pwb + 1 pfence
// per link change.
//
// The link cache (the paper's second technique): instead of writing back at once, the
// updater parks the link's address in a small shared table (64 buckets of one cache line,
// 6 entries each, chosen by the key's hash) and returns; the link keeps its unpersisted bit.
// A bucket is written back as a batch (one pwb per still-unpersisted link, ONE pfence, bits
// cleared, entries freed) when it is full and an update needs an entry, or when an operation
// on a key whose hash tag is parked there is about to return (settle). Whoever finds the
// bucket's write-back lock taken persists the link(s) it needs directly (never waits).
// What differs from the authors' library: there the parked link's mark is cleared at once
// and only the table remembers it; here the bit stays set until the write-back, so any
// thread whose traversal passes it also writes it back (the paper's rule for marked links),
// which is what "no operation returns having observed a non-durable link" needs when the
// dependent operation is on another key (e.g. a key inserted after a node whose own link is
// still parked). As in the paper, an update that
// parked its link returns before that link is durable (the cache's relaxation: it becomes
// durable no later than any operation on its key, or on a key whose window contains it).
//
// Entries hold addresses of link words inside nodes that are never freed (the baseline does
// not reclaim), so a stale entry can only cause a redundant write-back, never a wild store.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "ferrite/pmem/primitives.hpp"

namespace ferrite::bench::logfree {

using link = std::atomic<std::uintptr_t>;

inline constexpr std::uintptr_t deleted_bit = 1;
inline constexpr std::uintptr_t unpersisted_bit = 2;
inline constexpr std::uintptr_t flag_bits = deleted_bit | unpersisted_bit;

// CAS *l from `expected` to `desired`, ignoring a difference in the unpersisted bit of the
// current value only (a helper may have cleared or set it meanwhile: same link, same target).
inline bool cas_link(link& l, std::uintptr_t expected, std::uintptr_t desired) noexcept {
    std::uintptr_t e = expected;
    for (;;) {
        if (l.compare_exchange_strong(e, desired, std::memory_order_acq_rel, std::memory_order_acquire))
            return true;
        if ((e | unpersisted_bit) != (expected | unpersisted_bit)) return false;
    }
}

// The links an operation depends on: add() writes back each one still unpersisted (when
// more than N are pending, the first N are finished first); finish() fences once (if anything
// was written back) and clears their bits; fenced() clears them after a pfence the caller
// issued itself after the add()s.
template <std::size_t N>
class flush_batch {
public:
    void add(link* l) noexcept {
        if (!l) return;
        const auto v = l->load(std::memory_order_acquire);
        if (!(v & unpersisted_bit)) return;
        if (n_ == N) finish();
        pmem::pwb(l);
        items_[n_++] = {l, v};
    }
    void finish() noexcept {
        if (n_ == 0) return;
        pmem::pfence();
        fenced();
    }
    void fenced() noexcept {
        for (std::size_t i = 0; i < n_; ++i) {
            auto v = items_[i].value;
            items_[i].at->compare_exchange_strong(v, v & ~unpersisted_bit, std::memory_order_acq_rel,
                                                  std::memory_order_relaxed);
        }
        n_ = 0;
    }
    bool empty() const noexcept { return n_ == 0; }

private:
    struct item {
        link* at;
        std::uintptr_t value;
    };
    std::array<item, N> items_{};
    std::size_t n_ = 0;
};

// Link-and-persist without the cache: CAS, pwb, pfence, clear the bit.
inline bool link_and_persist(link& l, std::uintptr_t expected, std::uintptr_t desired) noexcept {
    if (!cas_link(l, expected, desired | unpersisted_bit)) return false;
    pmem::pwb(&l);
    pmem::pfence();
    auto d = desired | unpersisted_bit;
    l.compare_exchange_strong(d, desired, std::memory_order_acq_rel, std::memory_order_relaxed);
    return true;
}

class link_cache {
public:
    static constexpr unsigned buckets = 64;
    static constexpr unsigned entries = 6;

    // Change l from `expected` to `desired` (flag bits of desired: deleted only) and park it
    // under the key hash h. False: the CAS failed (nothing parked).
    bool park_link(std::uint64_t h, link& l, std::uintptr_t expected, std::uintptr_t desired) noexcept {
        bucket& b = buckets_[bucket_of(h)];
        for (;;) {
            auto s = b.state.load(std::memory_order_acquire);
            const int i = free_entry(s);
            if (i < 0) {
                if (parked_mask(s) && write_back(b)) continue;
                return link_and_persist(l, expected, desired);  // full, or written back by another
            }
            const auto reserved = s | (state_reserved << (2 * i));
            if (!b.state.compare_exchange_weak(s, reserved, std::memory_order_acq_rel)) continue;
            b.addrs[i].store(&l, std::memory_order_relaxed);
            b.tags[i].store(tag_of(h), std::memory_order_relaxed);
            if (!cas_link(l, expected, desired | unpersisted_bit)) {
                b.state.fetch_and(~(std::uint32_t{3} << (2 * i)), std::memory_order_release);
                return false;
            }
            b.state.fetch_xor(std::uint32_t{3} << (2 * i), std::memory_order_release);  // -> parked
            return true;
        }
    }

    // Before an operation on the key with hash h returns: the links parked under its tag
    // are durable afterwards (the bucket written back, or those links persisted directly).
    void settle(std::uint64_t h) noexcept {
        bucket& b = buckets_[bucket_of(h)];
        const auto s = b.state.load(std::memory_order_acquire);
        if (s == 0) return;
        const auto t = tag_of(h);
        flush_batch<entries> direct;
        for (unsigned i = 0; i < entries; ++i) {
            const auto st = (s >> (2 * i)) & 3;
            if (st == state_free || b.tags[i].load(std::memory_order_relaxed) != t) continue;
            if (st == state_parked && write_back(b)) return;
            direct.add(b.addrs[i].load(std::memory_order_relaxed));
        }
        direct.finish();
    }

    // Every parked link written back (tests; teardown).
    void write_back_all() noexcept {
        for (auto& b : buckets_)
            while (parked_mask(b.state.load(std::memory_order_acquire)) && !write_back(b)) pmem::wait_hint();
    }

    std::size_t parked() const noexcept {
        std::size_t n = 0;
        for (const auto& b : buckets_) n += static_cast<std::size_t>(__builtin_popcount(parked_mask(b.state.load())));
        return n;
    }

private:
    static constexpr std::uint32_t state_free = 0, state_reserved = 1, state_parked = 2;

    // One cache line: 2 state bits per entry, the write-back lock, 8-bit tags, addresses.
    struct alignas(64) bucket {
        std::atomic<std::uint32_t> state{0};
        std::atomic<std::uint8_t> busy{0};
        std::array<std::atomic<std::uint8_t>, entries> tags{};
        std::array<std::atomic<link*>, entries> addrs{};
    };
    static_assert(sizeof(bucket) == 64, "a link-cache bucket is one cache line");

    static unsigned bucket_of(std::uint64_t h) noexcept { return static_cast<unsigned>(h >> 40) % buckets; }
    static std::uint8_t tag_of(std::uint64_t h) noexcept { return static_cast<std::uint8_t>(h >> 56); }
    static int free_entry(std::uint32_t s) noexcept {
        for (unsigned i = 0; i < entries; ++i)
            if (((s >> (2 * i)) & 3) == state_free) return static_cast<int>(i);
        return -1;
    }
    // One bit per parked entry (bit 2i+1 of the state).
    static std::uint32_t parked_mask(std::uint32_t s) noexcept { return s & 0xAAAu; }

    // Write back every parked entry of b with one pfence. False: another thread holds the lock.
    bool write_back(bucket& b) noexcept {
        std::uint8_t z = 0;
        if (!b.busy.compare_exchange_strong(z, 1, std::memory_order_acquire)) return false;
        const auto parked = parked_mask(b.state.load(std::memory_order_acquire));
        flush_batch<entries> batch;
        for (unsigned i = 0; i < entries; ++i)
            if (parked & (2u << (2 * i))) batch.add(b.addrs[i].load(std::memory_order_relaxed));
        batch.finish();
        b.state.fetch_and(~(parked | (parked >> 1)), std::memory_order_release);  // parked -> free
        b.busy.store(0, std::memory_order_release);
        return true;
    }

    std::array<bucket, buckets> buckets_{};
};

}  // namespace ferrite::bench::logfree
