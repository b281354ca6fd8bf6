// bench/calibration/one_thread_cpu.cpp: the 1-thread cost of a persisted stack operation in
// CPU time (CLOCK_THREAD_CPUTIME_ID), for comparing engine or core variants on a loaded
// machine, where `ferrite bench`'s wall-clock Mops/s follow the other sessions' load.
//
// Prints, per variant, the median over 7 runs of 200,000 operations of:
//   floor       store to 1 line of a 64-line ring, pwb, pfence (fence-floor's pass)
//   pfc         ferrite::stack on PFC, push/pop alternating (stack-pfc at 1 thread)
//   mutex       the stack core under a std::mutex (stack-mutex)
//   floor+xchg  floor plus one locked exchange after the pfence (what a lock's unlock adds)
// and each as a fraction of floor. Not part of the build (no CMake target, nothing in CI):
// a variant is this file compiled against another include tree, e.g. (docs/results.md):
//   g++ -std=c++20 -O3 -DNDEBUG -I<variant>/include -I. bench/calibration/one_thread_cpu.cpp
//       build/release/src/libferrite.a -lpmem2 -lpthread -o /tmp/one-thread-cpu
// Pools: /dev/shm, backend clwb.
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <vector>

#include "bench/containers/scratch_pool.hpp"
#include "ferrite/containers/stack.hpp"
#include "ferrite/pmem/backend.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace {

using namespace ferrite;
constexpr int ops = 200000;

double cpu_ns() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

double floor_ns(bool with_xchg) {
    bench::scratch_pool sp("/dev/shm");
    auto* lines = static_cast<std::uint64_t*>(sp.heap().allocate(64 * 64));
    std::atomic<std::uint32_t> word{0};
    const double t0 = cpu_ns();
    for (int i = 0; i < ops; ++i) {
        auto* w = lines + (i % 64) * 8;
        *w = static_cast<std::uint64_t>(i);
        pmem::pwb(w);
        pmem::pfence();
        if (with_xchg) word.exchange(0);
    }
    return (cpu_ns() - t0) / ops;
}

double pfc_ns() {
    bench::scratch_pool sp("/dev/shm");
    using st = ferrite::stack<std::uint64_t, alloc::buddy_heap>;
    auto s = st::create(sp.pool(), sp.heap(), sp.anchor(), 1024, containers::vector_options{});
    for (std::uint64_t i = 0; i < 100; ++i) s.push(i);
    const double t0 = cpu_ns();
    for (int i = 0; i < ops / 2; ++i) {
        s.push(static_cast<std::uint64_t>(i));
        (void)s.pop();
    }
    return (cpu_ns() - t0) / ops;
}

double mutex_ns() {
    bench::scratch_pool sp("/dev/shm");
    using core = containers::stack_core<std::uint64_t, alloc::buddy_heap>;
    core c(sp.pool(), sp.heap(), core::create(sp.pool(), sp.heap(), sp.anchor(), 1024), containers::vector_options{});
    std::mutex m;
    const auto run = [&](containers::vector_op o, std::uint64_t v) {
        core::slot_type s{{o, 0, 0, v}, {}};
        core::slot_type* one[] = {&s};
        std::lock_guard g(m);
        c.combine(std::span(one));
    };
    for (std::uint64_t i = 0; i < 100; ++i) run(containers::vector_op::push_back, i);
    const double t0 = cpu_ns();
    for (int i = 0; i < ops / 2; ++i) {
        run(containers::vector_op::push_back, static_cast<std::uint64_t>(i));
        run(containers::vector_op::pop_back, 0);
    }
    return (cpu_ns() - t0) / ops;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main() {
    pmem::set_backend(pmem::backend::clwb);
    std::vector<double> f, p, m, x;
    for (int r = 0; r < 7; ++r) {  // interleaved, so that a load change hits every variant
        f.push_back(floor_ns(false));
        p.push_back(pfc_ns());
        m.push_back(mutex_ns());
        x.push_back(floor_ns(true));
    }
    const double fl = median(f);
    std::printf("floor %.1f ns  pfc %.1f ns (%.2fx)  mutex %.1f ns (%.2fx)  floor+xchg %.1f ns (%.2fx)"
                "  [CPU ns/op, median of 7]\n",
                fl, median(p), fl / median(p), median(m), fl / median(m), median(x), fl / median(x));
}
