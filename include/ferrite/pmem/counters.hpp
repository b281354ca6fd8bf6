// ferrite/pmem/counters.hpp: per-thread counts of persistence instructions.
//
// Every primitive in primitives.hpp bumps the calling thread's counters, whatever the
// backend (they count what the algorithm *asked for*, so pwb/op is comparable between a
// clwb machine, an eADR machine and the crash simulator). Benchmarks read them in each
// worker thread before and after the measured region and add the differences up.
// The counters are plain thread_local integers: no atomics on the hot path.
#pragma once

#include <cstdint>

namespace ferrite::pmem {

struct counters {
    std::uint64_t pwb_lines = 0;  // cache lines written back (pwb, pwb_range per line)
    std::uint64_t pfences = 0;    // pfence calls
    std::uint64_t psyncs = 0;     // psync calls
    std::uint64_t nt_stores = 0;  // 8-byte non-temporal stores (nt_store, nt_memcpy)

    counters& operator+=(const counters& o) noexcept {
        pwb_lines += o.pwb_lines;
        pfences += o.pfences;
        psyncs += o.psyncs;
        nt_stores += o.nt_stores;
        return *this;
    }
    friend counters operator-(counters a, const counters& b) noexcept {
        a.pwb_lines -= b.pwb_lines;
        a.pfences -= b.pfences;
        a.psyncs -= b.psyncs;
        a.nt_stores -= b.nt_stores;
        return a;
    }
    friend bool operator==(const counters&, const counters&) = default;
};

namespace detail {
inline thread_local counters tls_counters{};
}

// The calling thread's counters since it started (or since reset_thread_counters()).
inline counters thread_counters() noexcept { return detail::tls_counters; }
inline void reset_thread_counters() noexcept { detail::tls_counters = counters{}; }

}  // namespace ferrite::pmem
