// ferrite/pmem/primitives.hpp: the persistence chokepoint.
//
// Every persistence instruction in ferrite is emitted here and nowhere else (CI greps for
// intrinsics outside ferrite/pmem). The vocabulary is the one of Izraelevitz et al. used by
// all five papers:
//   pwb(p)            write back the cache line holding p (asynchronously: clwb/clflushopt)
//   pwb_range(p, n)   pwb every line overlapping [p, p+n)
//   pfence()          order: earlier pwbs and NT stores persist before later stores (sfence)
//   psync()           wait until earlier pwbs and NT stores are durable (sfence on x86)
//   nt_store(p, v)    8-byte non-temporal store, bypassing the cache (movnti)
//   nt_memcpy(d,s,n)  copy with NT stores (unaligned head/tail: stores + pwb)
//   nt_copy_lines(d,s,n)  copy whole 64-byte lines with 16-byte NT stores (movntdq): no
//                     read for ownership of d's lines, nothing of them left in the cache
// A store is durable once a pwb of its line *and then* a pfence/psync of the same thread
// have executed (ordering axioms, docs/references.md). NT stores need only the
// fence.
//
// Hot path: one relaxed load of the process-wide mode and a predictable switch; the
// instruction is inline asm, so no target attributes are needed and the call inlines.
// Modes other than the three flush instructions (none, emulated, observed by the crash
// simulator) take an out-of-line slow path. Every call bumps the thread's counters
// (counters.hpp) and carries its std::source_location, which is free unless observed.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <source_location>

#include <emmintrin.h>  // SSE2 (every x86-64): the 16-byte loads and NT stores of nt_copy_lines

#include "ferrite/pmem/counters.hpp"
#include "ferrite/pmem/flow.hpp"  // the annotations of the structures built on these
#include "ferrite/pmem/observer.hpp"

namespace ferrite::pmem {

inline constexpr std::size_t cache_line_size = 64;

namespace detail {

// What the hot path does. `unresolved` is the state before the first call.
enum class mode : std::uint8_t { unresolved, clwb, clflushopt, clflush, slow };
inline constinit std::atomic<mode> g_mode{mode::unresolved};

void pwb_slow(const void* line, const site& where) noexcept;
void pfence_slow(const site& where) noexcept;
void psync_slow(const site& where) noexcept;
void nt_store_slow(std::uint64_t* dst, std::uint64_t value, const site& where) noexcept;
void nt_memcpy_slow(void* dst, const void* src, std::size_t n, const site& where) noexcept;
void nt_copy_lines_slow(void* dst, const void* src, std::size_t n, const site& where) noexcept;

// The hot-path test: a real flush instruction is in use (not none, emulated or observed).
inline bool real_instructions() noexcept {
    const auto m = g_mode.load(std::memory_order_relaxed);
    return m == mode::clwb || m == mode::clflushopt || m == mode::clflush;
}

inline const void* line_of(const void* p) noexcept {
    return reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(p) &
                                         ~std::uintptr_t{cache_line_size - 1});
}

inline void clwb(const void* p) noexcept {
    asm volatile("clwb %0" : "+m"(*static_cast<volatile char*>(const_cast<void*>(p))));
}
inline void clflushopt(const void* p) noexcept {
    asm volatile("clflushopt %0" : "+m"(*static_cast<volatile char*>(const_cast<void*>(p))));
}
inline void clflush(const void* p) noexcept {
    asm volatile("clflush %0" : "+m"(*static_cast<volatile char*>(const_cast<void*>(p))));
}
inline void sfence() noexcept { asm volatile("sfence" ::: "memory"); }
inline void movnti(std::uint64_t* dst, std::uint64_t v) noexcept {
    asm volatile("movnti %1, %0" : "=m"(*dst) : "r"(v) : "memory");
}
// n bytes (a multiple of 64) to dst (64-byte aligned), four 16-byte NT stores a line.
inline void movntdq_lines(void* dst, const void* src, std::size_t n) noexcept {
    auto* d = static_cast<__m128i*>(dst);
    const auto* s = static_cast<const __m128i*>(src);
    for (std::size_t i = 0; i < n / 16; i += 4) {
        const __m128i a = _mm_loadu_si128(s + i), b = _mm_loadu_si128(s + i + 1);
        const __m128i c = _mm_loadu_si128(s + i + 2), e = _mm_loadu_si128(s + i + 3);
        _mm_stream_si128(d + i, a);
        _mm_stream_si128(d + i + 1, b);
        _mm_stream_si128(d + i + 2, c);
        _mm_stream_si128(d + i + 3, e);
    }
}

}  // namespace detail

// Write back the cache line that holds p.
inline void pwb(const void* p, const site& where = site::current()) noexcept {
    ++detail::tls_counters.pwb_lines;
    switch (detail::g_mode.load(std::memory_order_relaxed)) {
        case detail::mode::clwb: detail::clwb(p); return;
        case detail::mode::clflushopt: detail::clflushopt(p); return;
        case detail::mode::clflush: detail::clflush(p); return;
        default: detail::pwb_slow(detail::line_of(p), where); return;
    }
}

// Whether a and b lie in one cache line (one pwb writes back both).
inline bool same_cache_line(const void* a, const void* b) noexcept {
    return detail::line_of(a) == detail::line_of(b);
}

// Write back every cache line overlapping [p, p + len). len == 0 writes back nothing.
inline void pwb_range(const void* p, std::size_t len, const site& where = site::current()) noexcept {
    if (len == 0) return;
    auto first = reinterpret_cast<std::uintptr_t>(detail::line_of(p));
    auto end = reinterpret_cast<std::uintptr_t>(p) + len;
    for (auto a = first; a < end; a += cache_line_size) pwb(reinterpret_cast<const void*>(a), where);
}

// Write back the lines of [a, a + len) and of [b, b + len), each line once (two elements
// that may share a line or straddle lines, e.g. the two sides of a swap).
inline void pwb_range_pair(const void* a, const void* b, std::size_t len,
                           const site& where = site::current()) noexcept {
    if (len == 0) return;
    pwb_range(a, len, where);
    const auto a_first = reinterpret_cast<std::uintptr_t>(detail::line_of(a));
    const auto a_end = reinterpret_cast<std::uintptr_t>(a) + len;
    const auto b_end = reinterpret_cast<std::uintptr_t>(b) + len;
    for (auto l = reinterpret_cast<std::uintptr_t>(detail::line_of(b)); l < b_end; l += cache_line_size)
        if (l < a_first || l >= a_end) pwb(reinterpret_cast<const void*>(l), where);
}

// Order earlier pwbs and NT stores of this thread before its later stores.
inline void pfence(const site& where = site::current()) noexcept {
    ++detail::tls_counters.pfences;
    if (detail::real_instructions()) return detail::sfence();
    detail::pfence_slow(where);
}

// Wait until earlier pwbs and NT stores of this thread are durable.
inline void psync(const site& where = site::current()) noexcept {
    ++detail::tls_counters.psyncs;
    if (detail::real_instructions()) return detail::sfence();
    detail::psync_slow(where);
}

// 8-byte non-temporal store; dst must be 8-byte aligned. Durable after the next pfence.
inline void nt_store(std::uint64_t* dst, std::uint64_t value,
                     const site& where = site::current()) noexcept {
    ++detail::tls_counters.nt_stores;
    if (detail::real_instructions()) return detail::movnti(dst, value);
    detail::nt_store_slow(dst, value, where);
}

// One iteration of a spin loop that waits for another thread. Not a persistence
// instruction: a pause, or, under the crash simulator, a point where its deterministic
// scheduler may run another thread (a spin loop without one would wait forever there).
// Every spin loop in ferrite calls it.
inline void wait_hint(const site& where = site::current()) noexcept {
    if (auto* o = installed_observer()) return o->on_wait(where);
    __builtin_ia32_pause();
}

// Copy n bytes to dst with non-temporal stores where dst is 8-byte aligned; unaligned head
// and tail bytes are stored normally and written back with pwb. Durable after the next pfence.
inline void nt_memcpy(void* dst, const void* src, std::size_t n,
                      const site& where = site::current()) noexcept {
    if (n == 0) return;
    detail::nt_memcpy_slow(dst, src, n, where);
}

// Copy n bytes, a multiple of 64, to dst, 64-byte aligned, with non-temporal stores of whole
// lines (src: any alignment). Durable after the next pfence, like nt_store; no pwb is needed.
// Unlike a copy and pwb_range, the destination's lines are not read first (no read for
// ownership) and are not left in the cache, displacing nothing: for many scattered lines that
// nobody reads soon (CpNvm's apply into its persistent image). Counted as n / 8 nt_stores;
// an observer sees one nt_store of n bytes, after the bytes are stored.
inline void nt_copy_lines(void* dst, const void* src, std::size_t n, const site& where = site::current()) noexcept {
    if (n == 0) return;
    if (detail::real_instructions()) {
        detail::tls_counters.nt_stores += n / 8;
        return detail::movntdq_lines(dst, src, n);
    }
    detail::nt_copy_lines_slow(dst, src, n, where);
}

}  // namespace ferrite::pmem
