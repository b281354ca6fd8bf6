// ferrite_open_bench: what validating a pool costs at open and at recovery.
//
//   ferrite_open_bench [--size-mib N] [--objects K] [--reps R] [--dir D]
//
// Builds a store of N MiB (default 1024) whose heap is fragmented (thousands of live blocks
// of mixed sizes with every other one freed) and which names K objects (default 100:
// vectors of several sizes and element types, and DFC stacks, queues and deques), closes it
// cleanly and keeps a "crashed" copy taken while it was open. Then, R times (default 7),
// interleaved, it times:
//   raw-open      pmem::pool::open + buddy_heap::open + catalog::recover_pool + catalog:
//                 what opening cost before validation-by-rehearsal (the objects' own open
//                 checks still run inside recover_pool)
//   store-open    ferrite::store::open: the same plus the header cross-checks, the rehearsal
//                 on a copy-on-write mapping, and the catalog's validation of every object
//   raw-recover / store-recover   the same two on the crashed copy (recovery runs)
//   check         what `ferrite pool check` runs (heap check, rehearsal, every object)
// and prints each one's median, min and max in milliseconds, and store/raw ratios.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ferrite/containers/store.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t0) {
    return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

void build(const std::filesystem::path& path, const std::filesystem::path& crashed, std::uint64_t size,
           unsigned objects) {
    std::filesystem::remove(path);
    std::filesystem::remove(crashed);
    auto s = ferrite::store::create(path, "open-bench", {.size = size});
    auto& heap = s.heap();
    // Fragment the heap: live blocks of mixed sizes, every other one freed.
    std::mt19937_64 rng(42);
    std::vector<void*> blocks;
    const std::uint64_t budget = size / 4;
    for (std::uint64_t used = 0; used < budget;) {
        const std::size_t bytes = std::size_t{64} << (rng() % 8);
        void* b = heap.allocate(bytes);
        heap.confirm_allocation(b);
        blocks.push_back(b);
        used += bytes;
    }
    for (std::size_t i = 0; i < blocks.size(); i += 2) {
        heap.deallocate(blocks[i]);
        heap.confirm_deallocation(blocks[i]);
    }
    auto& names = s.names();
    for (unsigned i = 0; i < objects; ++i) {
        const auto name = "object-" + std::to_string(i);
        switch (i % 5) {
            case 0: {
                auto v = names.open_vector<std::uint64_t>(name, 16);
                for (int k = 0; k < 1000; ++k) v->push_back(std::uint64_t(k));
                break;
            }
            case 1: {
                auto v = names.open_vector<double>(name, 4);
                for (int k = 0; k < 100; ++k) v->push_back(k * 0.5);
                break;
            }
            case 2: {
                auto q = names.open_dfc_queue<std::uint64_t>(name, 4, 64);
                for (unsigned k = 0; k < 200; ++k) q->enqueue(k % 4, k);
                break;
            }
            case 3: {
                auto st = names.open_dfc_stack<std::uint64_t>(name, 4, 64);
                for (unsigned k = 0; k < 200; ++k) st->push(k % 4, k);
                break;
            }
            default: {
                auto d = names.open_dfc_deque<std::uint64_t>(name, 4, 64);
                for (unsigned k = 0; k < 200; ++k) d->push_back(k % 4, k);
                break;
            }
        }
    }
    std::filesystem::copy_file(path, crashed);  // the bytes while open: a crash image
}

struct series {
    std::vector<double> ms;
    double median() const {
        auto v = ms;
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    }
};

}  // namespace

int main(int argc, char** argv) try {
    std::uint64_t size_mib = 1024;
    unsigned objects = 100, reps = 7;
    std::filesystem::path dir = "/dev/shm";
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--size-mib") size_mib = std::stoull(argv[i + 1]);
        else if (a == "--objects") objects = static_cast<unsigned>(std::stoul(argv[i + 1]));
        else if (a == "--reps") reps = static_cast<unsigned>(std::stoul(argv[i + 1]));
        else if (a == "--dir") dir = argv[i + 1];
        else {
            std::fprintf(stderr, "usage: ferrite_open_bench [--size-mib N] [--objects K] [--reps R] [--dir D]\n");
            return 2;
        }
    }
    if ((argc - 1) % 2 != 0 || reps == 0) {
        std::fprintf(stderr, "usage: ferrite_open_bench [--size-mib N] [--objects K] [--reps R] [--dir D]\n");
        return 2;
    }
    const auto tag = std::to_string(::getpid());
    const auto path = dir / ("ferrite-open-bench-" + tag);
    const auto crashed = dir / ("ferrite-open-bench-crashed-" + tag);
    const auto work = dir / ("ferrite-open-bench-work-" + tag);
    const auto t_build = clock_type::now();
    build(path, crashed, size_mib << 20, objects);
    std::printf("built a %llu MiB store with %u named objects and a fragmented heap in %.0f ms\n",
                static_cast<unsigned long long>(size_mib), objects, ms_since(t_build));

    using step = std::function<void(const std::filesystem::path&)>;
    const std::vector<std::pair<std::string, std::pair<bool, step>>> steps = {
        {"raw-open", {false, [](const auto& p) {
             auto pool = ferrite::pmem::pool::open(p, "open-bench");
             auto heap = ferrite::alloc::buddy_heap::open(pool, pool.heap_offset());
             ferrite::catalog::recover_pool(pool, heap);
             ferrite::catalog names(pool, heap);
         }}},
        {"store-open", {false, [](const auto& p) { auto s = ferrite::store::open(p, "open-bench"); }}},
        {"raw-recover", {true, [](const auto& p) {
             auto pool = ferrite::pmem::pool::open(p, "open-bench");
             auto heap = ferrite::alloc::buddy_heap::open(pool, pool.heap_offset());
             ferrite::catalog::recover_pool(pool, heap);
             ferrite::catalog names(pool, heap);
         }}},
        {"store-recover", {true, [](const auto& p) { auto s = ferrite::store::open(p, "open-bench"); }}},
        {"check", {false, [](const auto& p) {
             auto pool = ferrite::pmem::pool::inspect(p);
             const auto heap = ferrite::alloc::buddy_heap::open(pool, pool.heap_offset());
             if (!heap.check().empty()) throw std::runtime_error("heap check failed");
             auto copy = pool.private_copy();
             auto h = ferrite::alloc::buddy_heap::open(copy, copy.heap_offset());
             ferrite::catalog::recover_pool(copy, h);
             ferrite::catalog names(copy, h);
             names.validate();
         }}},
    };
    std::map<std::string, series> results;
    for (unsigned r = 0; r < reps; ++r)
        for (const auto& [name, s] : steps) {
            // Each timed step starts from an untouched copy (a recovery changes its file).
            std::filesystem::remove(work);
            std::filesystem::copy_file(s.first ? crashed : path, work);
            const auto t0 = clock_type::now();
            s.second(work);
            results[name].ms.push_back(ms_since(t0));
        }
    std::printf("%-14s %10s %10s %10s   (ms, %u repetitions interleaved)\n", "step", "median", "min", "max", reps);
    for (const auto& [name, s] : steps) {
        const auto& v = results[name].ms;
        std::printf("%-14s %10.2f %10.2f %10.2f\n", name.c_str(), results[name].median(),
                    *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end()));
    }
    std::printf("store-open / raw-open       %.2fx\n", results["store-open"].median() / results["raw-open"].median());
    std::printf("store-recover / raw-recover %.2fx\n",
                results["store-recover"].median() / results["raw-recover"].median());
    for (const auto& p : {path, crashed, work}) std::filesystem::remove(p);
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "ferrite_open_bench: %s\n", e.what());
    return 1;
}
