// ferrite/sync/thread_id.hpp: small dense per-thread ids, reused after a thread exits.
//
// FPFC indexes its publication array by thread (PFC thesis L893: "a plain thread-local slot
// and a contiguous array"). Ids are taken on a thread's first call and given back when it
// exits, so a process that starts and ends many threads keeps its ids below the number of
// threads alive at once. high_water() bounds every id ever handed out: a combiner scans
// slots [0, high_water()).
#pragma once

#include <cstdint>

namespace ferrite::sync {

inline constexpr unsigned max_thread_ids = 1024;

// The calling thread's id in [0, max_thread_ids). Throws ferrite::usage_error when more than
// max_thread_ids threads use ids at once.
unsigned this_thread_id();
unsigned thread_id_high_water() noexcept;

}  // namespace ferrite::sync
