// bench/calibration/one_thread_cpu.cpp: the 1-thread cost of a persisted stack operation in
// CPU time (CLOCK_THREAD_CPUTIME_ID), for comparing engine or core variants on a loaded
// machine, where `ferrite bench`'s wall-clock Mops/s follow the other sessions' load.
//
// Prints, per variant, the median over 7 runs of 200,000 operations of:
//   floor       store to 1 line of a 64-line ring, pwb, pfence (fence-floor's pass)
//   pfc         ferrite::stack on PFC, push/pop alternating (stack-pfc at 1 thread)
//   mutex       the stack core under a std::mutex (stack-mutex)
//   floor+xchg  floor plus one locked exchange after the pfence (what a lock's unlock adds)
// and each as a fraction of floor. With the argument `parts`, the pass taken apart instead:
//   ring k      store + pwb + pfence + xchg over a ring of k lines (k = 1, 2, 4, 8, 16, 64):
//               the price of storing to a line written back k operations before (issue 23:
//               the vector's state records, two in format 2, eight in format 3)
//   load back   k = 8 with the stored value loaded from the line written back 1 or 2
//               operations before (a record's epoch), or with a value line never written back
//   work        40 dependent multiply-adds alone, before floor's store, after its xchg
//   none        pfc and mutex under the `none` backend: the passes' CPU work without pwb/pfence Not part of the build (no CMake target, nothing in CI):
// a variant is this file compiled against another include tree, e.g. (docs/results.md):
//   g++ -std=c++20 -O3 -DNDEBUG -I<variant>/include -I. bench/calibration/one_thread_cpu.cpp
//       build/release/src/libferrite.a -lpmem2 -lpthread -o /tmp/one-thread-cpu
// Pools: /dev/shm, backend clwb.
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <mutex>
#include <vector>

#include "bench/calibration/cpu_clock.hpp"
#include "bench/containers/scratch_pool.hpp"
#include "ferrite/containers/stack.hpp"
#include "ferrite/pmem/backend.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace {

using ferrite::bench::calibration::median;
using ferrite::bench::calibration::thread_cpu_ns;

using namespace ferrite;
constexpr int ops = 200000;

double floor_ns(bool with_xchg) {
    bench::scratch_pool sp("/dev/shm");
    auto* lines = static_cast<std::uint64_t*>(sp.heap().allocate(64 * 64));
    std::atomic<std::uint32_t> word{0};
    const double t0 = thread_cpu_ns();
    for (int i = 0; i < ops; ++i) {
        auto* w = lines + (i % 64) * 8;
        *w = static_cast<std::uint64_t>(i);
        pmem::pwb(w);
        pmem::pfence();
        if (with_xchg) word.exchange(0);
    }
    return (thread_cpu_ns() - t0) / ops;
}

// store + pwb + pfence + xchg over a ring of `n` lines (n = 64: floor+xchg): each store goes to
// the line written back n operations before. `load_back` > 0: the stored value depends on a
// load from the line written back load_back operations before (a record's `epoch = the
// state's epoch + 1`); `value_line`: a store to (even operations) or load from (odd) one more
// line that is never written back (a pushed value, then popped).
double ring_ns(unsigned n, unsigned load_back = 0, bool value_line = false) {
    bench::scratch_pool sp("/dev/shm");
    auto* lines = static_cast<std::uint64_t*>(sp.heap().allocate((n + 1) * 64));
    std::memset(lines, 0, (n + 1) * 64);
    std::uint64_t* value = lines + n * 8;
    std::atomic<std::uint32_t> word{0};
    const double t0 = thread_cpu_ns();
    for (int i = 0; i < ops; ++i) {
        auto* w = lines + (i % n) * 8;
        std::uint64_t e = static_cast<std::uint64_t>(i);
        if (load_back > 0) e = lines[((i + n - load_back) % n) * 8] + load_back;
        w[1] = e;
        if (value_line) {
            if (i % 2 == 0) *value = e;
            else w[2] = *value;
        }
        std::atomic_signal_fence(std::memory_order_release);
        w[0] = e;
        pmem::pwb(w);
        pmem::pfence();
        word.exchange(0);
    }
    return (thread_cpu_ns() - t0) / ops;
}

// A dependent chain of `k` multiply-adds (about 4 cycles each), not optimised away.
inline std::uint64_t busy(std::uint64_t x, int k) {
    for (int j = 0; j < k; ++j) {
        x = x * 3 + 1;
        asm volatile("" : "+r"(x));
    }
    return x;
}

// floor with `k` steps of busy work before the store (pre) or after the pfence (post),
// and the busy work alone (no store, no fence).
double work_ns(int k, int where) {
    bench::scratch_pool sp("/dev/shm");
    auto* lines = static_cast<std::uint64_t*>(sp.heap().allocate(64 * 64));
    std::atomic<std::uint32_t> word{0};
    std::uint64_t x = 1;
    const double t0 = thread_cpu_ns();
    for (int i = 0; i < ops; ++i) {
        auto* w = lines + (i % 64) * 8;
        if (where == 0) x = busy(x, k);
        if (where != 2) {
            *w = x;
            pmem::pwb(w);
            pmem::pfence();
            word.exchange(0);
        }
        if (where != 0) x = busy(x, k);
    }
    asm volatile("" ::"r"(x));
    return (thread_cpu_ns() - t0) / ops;
}

double pfc_ns() {
    bench::scratch_pool sp("/dev/shm");
    using st = ferrite::stack<std::uint64_t, alloc::buddy_heap>;
    auto s = st::create(sp.pool(), sp.heap(), sp.anchor(), 1024, containers::vector_options{});
    for (std::uint64_t i = 0; i < 100; ++i) s.push(i);
    const double t0 = thread_cpu_ns();
    for (int i = 0; i < ops / 2; ++i) {
        s.push(static_cast<std::uint64_t>(i));
        (void)s.pop();
    }
    return (thread_cpu_ns() - t0) / ops;
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
    const double t0 = thread_cpu_ns();
    for (int i = 0; i < ops / 2; ++i) {
        run(containers::vector_op::push_back, static_cast<std::uint64_t>(i));
        run(containers::vector_op::pop_back, 0);
    }
    return (thread_cpu_ns() - t0) / ops;
}

}  // namespace

int main(int argc, char** argv) {
    // `all` (default): the stack and its calibration; `parts`: the pass taken apart.
    const std::string what = argc > 1 ? argv[1] : "all";
    pmem::set_backend(pmem::backend::clwb);
    if (what == "parts") {
        const unsigned rings[] = {1, 2, 4, 8, 16, 64};
        std::vector<double> f, ring[6], back1, back2, value, pre, post, alone, pn, mn;
        const int k = 40;
        for (int r = 0; r < 7; ++r) {
            f.push_back(floor_ns(false));
            for (int j = 0; j < 6; ++j) ring[j].push_back(ring_ns(rings[j]));
            back1.push_back(ring_ns(8, 1));
            back2.push_back(ring_ns(8, 2));
            value.push_back(ring_ns(8, 0, true));
            pre.push_back(work_ns(k, 0));
            post.push_back(work_ns(k, 1));
            alone.push_back(work_ns(k, 2));
            pmem::set_backend(pmem::backend::none);  // the passes' CPU work alone
            pn.push_back(pfc_ns());
            mn.push_back(mutex_ns());
            pmem::set_backend(pmem::backend::clwb);
        }
        std::printf("floor %.1f  store+pwb+pfence+xchg over a ring of k lines:", median(f));
        for (int j = 0; j < 6; ++j) std::printf(" k=%u %.1f", rings[j], median(ring[j]));
        std::printf("\nk=8 with a load from the line written back 1 / 2 operations before: %.1f / %.1f;"
                    " with a value line (never written back): %.1f\n"
                    "work(%d) alone %.1f  floor+xchg+work before the store %.1f  after the xchg %.1f\n"
                    "backend none (no pwb, no pfence): pfc %.1f  mutex %.1f  [CPU ns/op, median of 7]\n",
                    median(back1), median(back2), median(value), k, median(alone), median(pre), median(post), median(pn), median(mn));
        return 0;
    }
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
