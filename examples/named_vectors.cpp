// examples/named_vectors.cpp: several named vectors and a detectable queue in one pool,
// found again by name after a restart, recovered first if the last run crashed. The README's catalog example, built and
// run by the tests (tests/cli/examples_test.sh).
//
//   named_vectors POOL_PATH [ROUNDS]    each run appends ROUNDS (default 1) rounds and prints
//                                       the sizes: run it twice and they double
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/containers/catalog.hpp"
#include "ferrite/pmem/pool.hpp"

namespace pm = ferrite::pmem;

struct tick {  // any trivially copyable type works: 24 bytes here
    std::uint64_t time;
    double price;
    std::uint32_t volume;
};

int main(int argc, char** argv) try {
    if (argc < 2) {
        std::fprintf(stderr, "usage: named_vectors POOL_PATH [ROUNDS]\n");
        return 2;
    }
    const std::filesystem::path path = argv[1];
    const int rounds = argc > 2 ? std::stoi(argv[2]) : 1;
    const bool fresh = !std::filesystem::exists(path);
    auto pool = fresh ? pm::pool::create(path, "named-vectors", 16 << 20) : pm::pool::open(path, "named-vectors");
    auto heap = fresh ? ferrite::alloc::buddy_heap::create(
                            pool, static_cast<std::uint64_t>(static_cast<std::byte*>(pool.root_bytes(8 << 20)) - pool.base()),
                            8 << 20)
                      : ferrite::alloc::buddy_heap::open(pool, pool.heap_offset());
    if (!fresh) ferrite::catalog::recover_pool(pool, heap);  // after every open; real work only after a crash

    ferrite::catalog names(pool, heap);
    auto ids = names.open_vector<std::uint64_t>("ids");  // created empty on first use
    auto ticks = names.open_vector<tick>("ticks");
    auto jobs = names.open_dfc_queue<std::uint64_t>("jobs", 4);  // DFC: thread ids 0..3
    std::vector<std::thread> workers;  // any thread may use a vector: one combiner serves all
    for (int t = 0; t < 4; ++t)
        workers.emplace_back([&, t] {
            for (int i = 0; i < rounds * 100; ++i) {
                ids->push_back(std::uint64_t(t) << 32 | std::uint64_t(i));
                ticks->push_back({std::uint64_t(i), 100.0 + t, std::uint32_t(i)});
                jobs->enqueue(static_cast<unsigned>(t), std::uint64_t(i));  // t: this thread's id
            }
        });
    for (auto& w : workers) w.join();
    for (const auto& o : names.list())
        std::printf("%s: %s of %llu-byte elements\n", o.name.c_str(), o.kind.c_str(),
                    static_cast<unsigned long long>(o.element_size));
    std::printf("ids %llu, ticks %llu, jobs %llu\n", static_cast<unsigned long long>(ids->size()),
                static_cast<unsigned long long>(ticks->size()),
                static_cast<unsigned long long>(jobs->unsynchronized_contents().size()));
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "named_vectors: %s\n", e.what());
    return 1;
}
