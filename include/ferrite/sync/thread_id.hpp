// ferrite/sync/thread_id.hpp: small dense per-thread ids, reused after a thread exits.
//
// FPFC indexes its publication array by thread (PFC thesis L893: "a plain thread-local slot
// and a contiguous array"). Ids are taken on a thread's first call and given back when it
// exits, so a process that starts and ends many threads keeps its ids below the number of
// threads alive at once. high_water() bounds every id ever handed out: a combiner scans
// slots [0, high_water()).
//
// this_thread_token() is the other kind of identity: a 64-bit number that no other thread of
// the process ever has, not even after this one exits (never reused, never 0). An owner word
// holding a token therefore names one thread for good, so "is it mine?" is one TLS load and
// one compare (DFC's thread-id claims, combining/dfc_tid_claims.hpp).
#pragma once

#include <cstdint>

namespace ferrite::sync {

inline constexpr unsigned max_thread_ids = 1024;

// The calling thread's id in [0, max_thread_ids). Throws ferrite::usage_error when more than
// max_thread_ids threads use ids at once.
unsigned this_thread_id();
unsigned thread_id_high_water() noexcept;

namespace detail {
inline constinit thread_local std::uint64_t thread_token = 0;  // 0 until first asked for
std::uint64_t assign_thread_token() noexcept;                   // sets and returns it
}  // namespace detail

// The calling thread's token: nonzero, distinct from every other thread's, past and future.
inline std::uint64_t this_thread_token() noexcept {
    const std::uint64_t t = detail::thread_token;
    return t != 0 ? t : detail::assign_thread_token();
}

}  // namespace ferrite::sync
