// Per-thread persistence counters (counters.hpp): the counters struct arithmetic, reset, and
// that each thread has its own counters (a new thread starts at zero, work in one thread
// never shows in another's).
#include "ferrite/pmem/counters.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <thread>

#include "ferrite/pmem/primitives.hpp"
#include "test_support.hpp"

namespace pm = ferrite::pmem;

namespace {

// A fixed amount of persistence work on a private buffer: 3 pwb lines, 2 pfences, 1 psync,
// 4 NT stores (all counts multiplied by `times`).
void do_work(unsigned times) {
    alignas(64) std::uint64_t words[16] = {};
    for (unsigned t = 0; t < times; ++t) {
        pm::pwb(&words[0]);
        pm::pwb_range(&words[1], 2 * pm::cache_line_size - 8);  // bytes 8..127: 2 lines
        pm::pfence();
        pm::pfence();
        pm::psync();
        for (unsigned i = 0; i < 4; ++i) pm::nt_store(&words[i], i + t);
    }
}

pm::counters work_counters(unsigned times) {
    return {.pwb_lines = 3u * times, .pfences = 2u * times, .psyncs = 1u * times,
            .nt_stores = 4u * times};
}

TEST(CountersTest, DefaultIsZero) {
    const pm::counters c{};
    EXPECT_EQ(c.pwb_lines, 0u);
    EXPECT_EQ(c.pfences, 0u);
    EXPECT_EQ(c.psyncs, 0u);
    EXPECT_EQ(c.nt_stores, 0u);
}

TEST(CountersTest, AddSubtractCompare) {
    pm::counters a{.pwb_lines = 10, .pfences = 20, .psyncs = 30, .nt_stores = 40};
    const pm::counters b{.pwb_lines = 1, .pfences = 2, .psyncs = 3, .nt_stores = 4};
    EXPECT_EQ(a - b, (pm::counters{.pwb_lines = 9, .pfences = 18, .psyncs = 27, .nt_stores = 36}));
    a += b;
    EXPECT_EQ(a, (pm::counters{.pwb_lines = 11, .pfences = 22, .psyncs = 33, .nt_stores = 44}));
    EXPECT_NE(a, b);
    EXPECT_EQ(a - a, pm::counters{});
    EXPECT_NE((pm::counters{.pwb_lines = 1}), (pm::counters{.pfences = 1}));
    EXPECT_NE((pm::counters{.psyncs = 1}), (pm::counters{.nt_stores = 1}));
}

TEST(CountersTest, ResetZeroesTheCallingThread) {
    do_work(1);
    EXPECT_NE(pm::thread_counters(), pm::counters{});
    pm::reset_thread_counters();
    EXPECT_EQ(pm::thread_counters(), pm::counters{});
}

TEST(CountersTest, DifferenceMeasuresARegion) {
    do_work(2);
    const pm::counters before = pm::thread_counters();
    do_work(3);
    EXPECT_EQ(pm::thread_counters() - before, work_counters(3));
}

TEST(CountersTest, NewThreadStartsAtZero) {
    do_work(1);  // this thread has non-zero counters
    pm::counters seen{.pwb_lines = 99};
    std::thread t([&] { seen = pm::thread_counters(); });
    t.join();
    EXPECT_EQ(seen, pm::counters{});
}

TEST(CountersTest, ThreadsCountIndependently) {
    pm::reset_thread_counters();
    do_work(1);
    const pm::counters main_before = pm::thread_counters();
    ASSERT_EQ(main_before, work_counters(1));

    pm::counters in_a{}, in_b{};
    std::thread a([&] {
        do_work(5);
        in_a = pm::thread_counters();
    });
    std::thread b([&] {
        do_work(2);
        pm::reset_thread_counters();  // resets b only
        do_work(7);
        in_b = pm::thread_counters();
    });
    a.join();
    b.join();

    EXPECT_EQ(in_a, work_counters(5));
    EXPECT_EQ(in_b, work_counters(7));
    EXPECT_EQ(pm::thread_counters(), main_before) << "other threads' work reached this thread";

    // And the other way round: resetting here does not touch a later thread's view either.
    pm::reset_thread_counters();
    pm::counters in_c{};
    std::thread c([&] {
        do_work(1);
        in_c = pm::thread_counters();
    });
    c.join();
    EXPECT_EQ(in_c, work_counters(1));
    EXPECT_EQ(pm::thread_counters(), pm::counters{});
}

}  // namespace

namespace {
// pwb_range_pair writes back each line of two ranges once, whether they share lines or not.
TEST(CountersTest, RangePairFlushesSharedLinesOnce) {
    alignas(64) unsigned char buf[512] = {};
    const auto lines = [&](std::size_t a, std::size_t b, std::size_t len) {
        pm::reset_thread_counters();
        pm::pwb_range_pair(&buf[a], &buf[b], len);
        return pm::thread_counters().pwb_lines;
    };
    EXPECT_EQ(lines(0, 8, 8), 1u) << "both in line 0";
    EXPECT_EQ(lines(0, 64, 8), 2u) << "lines 0 and 1";
    EXPECT_EQ(lines(48, 72, 24), 2u) << "48..71 is lines 0-1, 72..95 line 1";
    EXPECT_EQ(lines(48, 184, 24), 4u) << "lines 0-1, then 184..207: lines 2-3";
    EXPECT_EQ(lines(120, 48, 24), 3u) << "b before a: lines 1-2, then line 0 (line 1 shared)";
    EXPECT_EQ(lines(0, 0, 0), 0u);
}
}  // namespace
