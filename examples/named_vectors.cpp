// examples/named_vectors.cpp: several named vectors and a detectable queue in one pool,
// found again by name after a restart, recovered first if the last run crashed (ferrite::store). The README's catalog example, built and
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

#include "ferrite/containers/store.hpp"

struct tick {  // any trivially copyable type works: 24 bytes here
    std::uint64_t time;
    double price;
    std::uint32_t volume;
};
FERRITE_PERSISTENT_TYPE(tick, "tick");  // its name on media: renaming the struct keeps the data

int main(int argc, char** argv) try {
    if (argc < 2) {
        std::fprintf(stderr, "usage: named_vectors POOL_PATH [ROUNDS]\n");
        return 2;
    }
    const std::filesystem::path path = argv[1];
    const int rounds = argc > 2 ? std::stoi(argv[2]) : 1;
    // Created with its heap and catalog if absent, opened (and recovered if the last run
    // crashed) otherwise; a kill at any moment, first run included, leaves a pool that opens.
    auto store = ferrite::store::open_or_create(path, "named-vectors", {.size = 16 << 20});
    auto& names = store.names();
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
