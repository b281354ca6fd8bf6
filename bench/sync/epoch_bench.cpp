// bench/sync/epoch_bench.cpp: ferrite_epoch_bench, what epoch reclamation costs an operation
// (sync/epoch_domain.hpp; every set operation pins once).
//
//   pin_unpin          an outermost pin and its unpin (announce, validate, idle store)
//   pin_nested         a pin inside a held guard (a counter)
//   pin_retire_unpin   pin, retire a node with an empty reclaim function, unpin: includes
//                      the bag append, a collection every 64 retires and running the bags
//   xchg_floor         one seq_cst exchange on a thread's own line: the floor of a pin
//   Threads 1, 2, 4: one domain shared, each thread its own record.
//
//   ferrite_epoch_bench [--benchmark_min_time=0.2] [--benchmark_filter=...]
// Not a test: nothing asserts on speed.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>

#include "ferrite/sync/epoch_domain.hpp"

namespace {

ferrite::sync::epoch_domain& shared_domain() {
    static ferrite::sync::epoch_domain d;
    return d;
}

void reclaim_nothing(void*, void*) {}

void pin_unpin(benchmark::State& state) {
    auto& d = shared_domain();
    for (auto _ : state) {
        auto g = d.pin();
        benchmark::ClobberMemory();
    }
}
BENCHMARK(pin_unpin)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();

void pin_nested(benchmark::State& state) {
    auto& d = shared_domain();
    auto outer = d.pin();
    for (auto _ : state) {
        auto g = d.pin();
        benchmark::ClobberMemory();
    }
}
BENCHMARK(pin_nested)->Threads(1)->UseRealTime();

void pin_retire_unpin(benchmark::State& state) {
    auto& d = shared_domain();
    int node = 0;
    for (auto _ : state) {
        auto g = d.pin();
        d.retire(&node, reclaim_nothing, nullptr);
    }
}
BENCHMARK(pin_retire_unpin)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();

void xchg_floor(benchmark::State& state) {
    alignas(64) std::atomic<std::uint64_t> word{0};
    std::uint64_t v = 0;
    for (auto _ : state) {
        word.exchange(++v, std::memory_order_seq_cst);
        benchmark::ClobberMemory();
    }
}
BENCHMARK(xchg_floor)->Threads(1)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
