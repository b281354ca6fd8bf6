// Several threads allocate, write, check and free concurrently (run under TSan in CI).
#include <random>
#include <thread>

#include "heap_test_support.hpp"

namespace {

using ferrite::alloc::buddy_heap;
using namespace ferrite_test;

TEST(HeapConcurrency, ThreadsNeverShareABlockAndEverythingMergesBack) {
    constexpr unsigned threads = 4;
    constexpr int ops = 3000;
    region mem(4 << 20);
    auto heap = buddy_heap::create_in(mem.data(), mem.size(), {.confirm_slots = 64});
    std::vector<std::thread> workers;
    std::atomic<int> failures{0};
    for (unsigned t = 0; t < threads; ++t)
        workers.emplace_back([&, t] {
            std::mt19937_64 rng(t + 1);
            std::vector<std::pair<unsigned char*, std::size_t>> mine;
            const auto mark = static_cast<unsigned char>(t + 1);
            for (int i = 0; i < ops; ++i) {
                if (mine.size() < 8 && (mine.empty() || rng() % 2)) {
                    const auto bytes = 1 + rng() % 4096;
                    auto* p = static_cast<unsigned char*>(heap.allocate(bytes));
                    heap.confirm_allocation(p);
                    std::memset(p, mark, bytes);
                    mine.emplace_back(p, bytes);
                } else {
                    const auto k = rng() % mine.size();
                    auto [p, bytes] = mine[k];
                    for (std::size_t b = 0; b < bytes; ++b)
                        if (p[b] != mark) {
                            failures.fetch_add(1);
                            break;
                        }
                    heap.deallocate(p);
                    heap.confirm_deallocation(p);
                    mine.erase(mine.begin() + static_cast<std::ptrdiff_t>(k));
                }
            }
            for (auto [p, bytes] : mine) {
                heap.deallocate(p);
                heap.confirm_deallocation(p);
            }
        });
    for (auto& w : workers) w.join();
    EXPECT_EQ(failures.load(), 0) << "a block was handed to two threads";
    EXPECT_EQ(heap.check(), std::vector<std::string>{});
    const auto u = heap.usage();
    EXPECT_EQ(u.bytes_free, u.arena_bytes);
    EXPECT_EQ(u.fragmentation, 1.0 - static_cast<double>(u.largest_free) / static_cast<double>(u.bytes_free));
}

}  // namespace
