// bench/alloc/alloc_bench.cpp: ferrite_alloc_bench, the allocator benchmark of issue 4.
//
// Allocate/free pairs per second for sizes 64 B .. 64 KiB, in one run, of
//   buddy     ferrite's persistent buddy heap with the full confirm protocol (a pool file in
//             /dev/shm or $FERRITE_POOL_DIR; threads 1 and 2, one heap shared by the threads),
//   pmdk      PMDK's atomic allocator, pmemobj_alloc/pmemobj_free into a PMEMoid of the root
//             (threads 1 and 2, one pool),
//   volatile  the same heap code and client over DRAM, no persistence instruction (thread 1),
// then a ratio table: buddy/pmdk and buddy/volatile per size and thread count (see
// alloc_subjects.hpp for what exactly one pair does in each).
//
//   ferrite_alloc_bench                                  # everything, ~0.2 s per benchmark
//   ferrite_alloc_bench --benchmark_repetitions=5        # the table shows the medians
//   ferrite_alloc_bench --benchmark_filter='/4096/'      # one size
//
// Exit status 1 if any benchmark failed (it is then missing from the table).
// Every Google Benchmark flag works. --benchmark_min_time defaults to 0.2 (seconds) unless
// given. Counters: items_per_second (pairs/s, wall-clock time: all benchmarks use real time,
// so with 2 threads it is the pairs of both threads per second), and for buddy and volatile
// pwb/op and pfence/op (cache lines written back and fences per pair, from
// ferrite::pmem::thread_counters(); PMDK flushes through libpmem, invisible to them).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <exception>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "bench/alloc/alloc_subjects.hpp"
#include "bench/alloc/ratio_table.hpp"
#include "ferrite/pmem/backend.hpp"
#include "ferrite/pmem/counters.hpp"
#include "ferrite/pmem/pool_path.hpp"

namespace ab = ferrite::bench::alloc_bench;

namespace {

constexpr std::size_t sizes[] = {64, 256, 1024, 4096, 16384, 65536};

// The subjects, created on first use (so a filter that skips PMDK creates no PMDK pool) and
// destroyed, with their pool files, before main returns.
struct environment {
    std::once_flag buddy_once, pmdk_once, dram_once;
    std::unique_ptr<ab::persistent_heap> buddy;
    std::unique_ptr<ab::pmdk_heap> pmdk;
    std::unique_ptr<ab::dram_heap> dram;
};
environment env;

template <class T>
T& lazily(std::once_flag& once, std::unique_ptr<T>& slot) {
    std::call_once(once, [&] { slot = std::make_unique<T>(); });
    return *slot;
}

void report_counters(benchmark::State& state, const ferrite::pmem::counters& delta) {
    state.counters["pwb/op"] =
        benchmark::Counter(static_cast<double>(delta.pwb_lines), benchmark::Counter::kAvgIterations);
    state.counters["pfence/op"] =
        benchmark::Counter(static_cast<double>(delta.pfences), benchmark::Counter::kAvgIterations);
}

// Runs on every thread of the benchmark; the loop is the measured region.
void bench_buddy(benchmark::State& state, std::size_t bytes) {
    try {
        auto& h = lazily(env.buddy_once, env.buddy);
        auto& word = h.word(static_cast<std::size_t>(state.thread_index()));
        ab::buddy_warmup warm(h.heap(), bytes);
        const auto before = ferrite::pmem::thread_counters();
        for (auto _ : state) ab::buddy_pair(h.heap(), word, bytes);
        report_counters(state, ferrite::pmem::thread_counters() - before);
        state.SetItemsProcessed(state.iterations());
    } catch (const std::exception& e) {
        state.SkipWithError(e.what());
    }
}

void bench_volatile(benchmark::State& state, std::size_t bytes) {
    try {
        auto& h = lazily(env.dram_once, env.dram);
        ab::volatile_scope no_persistence;  // single-threaded benchmark only
        ab::buddy_warmup warm(h.heap(), bytes);
        const auto before = ferrite::pmem::thread_counters();
        for (auto _ : state) ab::buddy_pair(h.heap(), h.word(0), bytes);
        report_counters(state, ferrite::pmem::thread_counters() - before);
        state.SetItemsProcessed(state.iterations());
    } catch (const std::exception& e) {
        state.SkipWithError(e.what());
    }
}

void bench_pmdk(benchmark::State& state, std::size_t bytes) {
    try {
        auto& h = lazily(env.pmdk_once, env.pmdk);
        const auto t = static_cast<std::size_t>(state.thread_index());
        PMEMoid& slot = h.root().slots[t].oid;
        ab::pmdk_warmup warm(h, t, bytes);
        for (auto _ : state) ab::pmdk_pair(h.pop(), slot, bytes);
        state.SetItemsProcessed(state.iterations());
    } catch (const std::exception& e) {
        state.SkipWithError(e.what());
    }
}

std::map<std::string, ab::bench_id> register_all() {
    std::map<std::string, ab::bench_id> ids;
    for (std::size_t bytes : sizes) {
        const std::string n = std::to_string(bytes);
        auto add = [&](ab::subject who, void (*fn)(benchmark::State&, std::size_t)) {
            const std::string name = std::string("alloc/") + ab::to_string(who) + "/" + n;
            ids.emplace(name, ab::bench_id{who, bytes});
            return benchmark::RegisterBenchmark(name.c_str(), fn, bytes)->UseRealTime();
        };
        add(ab::subject::buddy, bench_buddy)->Threads(1)->Threads(2);
        add(ab::subject::pmdk, bench_pmdk)->Threads(1)->Threads(2);
        add(ab::subject::volatile_heap, bench_volatile)->Threads(1);
    }
    return ids;
}

// --benchmark_color as the library reads it (auto: colour on a terminal only).
bool use_color(int argc, char** argv) {
    std::string_view value = "auto";
    constexpr std::string_view flag = "--benchmark_color=";
    for (int i = 1; i < argc; ++i)
        if (std::string_view a(argv[i]); a.starts_with(flag)) value = a.substr(flag.size());
    if (value == "auto") return ::isatty(STDOUT_FILENO) != 0;
    return value == "true" || value == "yes" || value == "1";
}

}  // namespace

int main(int argc, char** argv) {
    const bool color = use_color(argc, argv);
    std::vector<char*> args(argv, argv + argc);
    std::string default_min_time = "--benchmark_min_time=0.2";
    bool min_time_given = false;
    for (int i = 1; i < argc; ++i)
        min_time_given = min_time_given || std::string_view(argv[i]).starts_with("--benchmark_min_time");
    if (!min_time_given) args.insert(args.begin() + 1, default_min_time.data());
    int n = static_cast<int>(args.size());
    args.push_back(nullptr);

    auto ids = register_all();
    benchmark::Initialize(&n, args.data());
    if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;

    benchmark::AddCustomContext("ferrite_backend",
                                std::string(ferrite::pmem::to_string(ferrite::pmem::current_backend())));
    benchmark::AddCustomContext("pool_dir", ferrite::pmem::pool_directory().string());

    ab::collecting_reporter reporter(std::move(ids), color);
    int rc = 0;
    try {
        benchmark::RunSpecifiedBenchmarks(&reporter);
        reporter.print_table(std::cout);
        for (const auto& f : reporter.failures()) std::cerr << "ferrite_alloc_bench: failed: " << f << '\n';
        if (!reporter.failures().empty()) rc = 1;
    } catch (const std::exception& e) {
        std::cerr << "ferrite_alloc_bench: " << e.what() << '\n';
        rc = 1;
    }
    env.buddy.reset();  // unmaps and removes the pool files
    env.pmdk.reset();
    env.dram.reset();
    benchmark::Shutdown();
    return rc;
}
