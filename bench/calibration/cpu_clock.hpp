// bench/calibration/cpu_clock.hpp: the two helpers the stand-alone CPU-time tools share
// (calibration/one_thread_cpu.cpp, trees/tree_cpu.cpp, trees/log_copy_cpu.cpp): this
// thread's CPU time, which a loaded machine's other sessions do not inflate as they do wall
// time, and the median of a round's figures.
#pragma once

#include <time.h>

#include <algorithm>
#include <vector>

namespace ferrite::bench::calibration {

// CPU time this thread has run, in nanoseconds (CLOCK_THREAD_CPUTIME_ID).
inline double thread_cpu_ns() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

// The median of `v` (the mean of the middle two for an even count); `v` must not be empty.
inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace ferrite::bench::calibration
