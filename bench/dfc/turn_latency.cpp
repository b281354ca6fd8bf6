// bench/dfc/turn_latency.cpp: mean operation latency of a dfc_stack shared by two threads
// that pause between their operations (a busy wait of --pause-us), to show what the sticky
// combiner (combining/dfc.hpp, defer_to_last_combiner) costs when the last combiner is
// away: with no pause the threads contend and deferring pays; with pauses they take turns,
// and a waiter that defers to an absent combiner only loses time. docs/results.md has the
// figures.
//
//   ferrite_dfc_turn_latency [--pause-us N] [--ops N] [--runs N]
//
// Each thread alternates push and pop, timing each call with steady_clock; the region is a
// 64-byte aligned DRAM buffer (the write-backs run as on a pool; only the waiting differs
// between configurations). Prints, per run, the mean latency over both threads' operations,
// then the median of the runs.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include <thread>
#include <vector>

#include "ferrite/containers/dfc_stack.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

struct options {
    unsigned pause_us = 0;
    unsigned ops = 20000;
    unsigned runs = 3;
};

bool parse(int argc, char** argv, options& o) {
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string_view flag = argv[i];
        char* end = nullptr;
        const unsigned long v = std::strtoul(argv[i + 1], &end, 10);
        if (end == argv[i + 1] || *end != '\0') return false;
        if (flag == "--pause-us") o.pause_us = static_cast<unsigned>(v);
        else if (flag == "--ops" && v > 0) o.ops = static_cast<unsigned>(v);
        else if (flag == "--runs" && v > 0) o.runs = static_cast<unsigned>(v);
        else return false;
    }
    return argc % 2 == 1;
}

// Mean nanoseconds per operation of one run.
double one_run(const options& o) {
    using stack = ferrite::dfc_stack<std::uint64_t>;
    const std::size_t bytes = stack::required_bytes(2, 4096);
    const std::unique_ptr<void, decltype(&std::free)> region(std::aligned_alloc(64, (bytes + 63) / 64 * 64), &std::free);
    std::memset(region.get(), 0, bytes);
    auto s = stack::create(region.get(), bytes, 2);
    std::vector<double> total_ns(2);
    auto work = [&](unsigned tid) {
        std::int64_t ns = 0;
        for (unsigned i = 0; i < o.ops; ++i) {
            const auto t0 = clock_type::now();
            if (i % 2 == 0) (void)s.push(tid, i);
            else (void)s.pop(tid);
            const auto t1 = clock_type::now();
            ns += std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
            for (const auto until = t1 + std::chrono::microseconds(o.pause_us); clock_type::now() < until;) {}
        }
        total_ns[tid] = static_cast<double>(ns);
    };
    std::thread a(work, 0u), b(work, 1u);
    a.join();
    b.join();
    return (total_ns[0] + total_ns[1]) / (2.0 * o.ops);
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    if (!parse(argc, argv, o)) {
        std::fprintf(stderr, "usage: %s [--pause-us N] [--ops N] [--runs N]\n", argv[0]);
        return 2;
    }
    std::vector<double> means;
    for (unsigned r = 0; r < o.runs; ++r) {
        means.push_back(one_run(o));
        std::printf("run %u: pause %u us, mean latency %.0f ns over %u operations x 2 threads\n", r + 1, o.pause_us,
                    means.back(), o.ops);
    }
    std::sort(means.begin(), means.end());
    std::printf("median of %u runs: %.0f ns\n", o.runs, means[means.size() / 2]);
}
