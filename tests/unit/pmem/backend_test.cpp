// Persistence backends (backend.hpp): every primitive under each backend this CPU supports,
// set_backend on an unsupported one, CPUID detection, name round trips, and the emulated
// backend's added latency (lower bounds only). Each test restores the backend it found.
#include "ferrite/pmem/backend.hpp"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <set>
#include <string>

#include "ferrite/error.hpp"
#include "ferrite/pmem/primitives.hpp"
#include "test_support.hpp"

namespace pm = ferrite::pmem;

namespace {

using BackendTest = ferrite_test::backend_test;

class EachBackend : public ferrite_test::backend_test,
                    public ::testing::WithParamInterface<pm::backend> {};

TEST_P(EachBackend, RunsEveryPrimitive) {
    const pm::backend b = GetParam();
    if (!pm::cpu_supports(b)) GTEST_SKIP() << "this CPU does not support " << pm::to_string(b);
    pm::set_backend(b);
    EXPECT_EQ(pm::current_backend(), b);
    ASSERT_EQ(pm::installed_observer(), nullptr);

    struct alignas(64) area {
        std::array<unsigned char, 4 * 64> bytes;
        std::array<std::uint64_t, 8> words;
        std::array<unsigned char, 64> copy;
    } a{};
    for (std::size_t i = 0; i < a.bytes.size(); ++i) a.bytes[i] = static_cast<unsigned char>(i);
    const auto bytes_before = a.bytes;
    const char src[] = "persistence primitives, every backend!!";
    static_assert(sizeof src == 40);

    pm::reset_thread_counters();
    pm::pwb(&a.bytes[5]);                             // 1 line
    pm::pwb_range(&a.bytes[60], 130);                 // bytes 60..189: 3 lines
    pm::nt_store(&a.words[2], 0xfeedfacecafebeefull);  // 1 NT store
    pm::nt_memcpy(&a.copy[3], src, sizeof src);       // head 5 (1 line), 4 words, tail 3 (1 line)
    pm::pfence();
    pm::psync();

    EXPECT_EQ(pm::thread_counters(),
              (pm::counters{.pwb_lines = 1 + 3 + 2, .pfences = 1, .psyncs = 1, .nt_stores = 1 + 4}));
    EXPECT_EQ(a.bytes, bytes_before);
    EXPECT_EQ(a.words[2], 0xfeedfacecafebeefull);
    EXPECT_EQ(std::memcmp(&a.copy[3], src, sizeof src), 0);
    EXPECT_EQ(pm::current_backend(), b);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, EachBackend, ::testing::ValuesIn(pm::all_backends),
                         [](const ::testing::TestParamInfo<pm::backend>& backend_info) {
                             return std::string(pm::to_string(backend_info.param));
                         });

TEST_F(BackendTest, AllBackendsListsEachOnce) {
    std::set<pm::backend> seen(std::begin(pm::all_backends), std::end(pm::all_backends));
    EXPECT_EQ(seen.size(), std::size(pm::all_backends));
    EXPECT_EQ(seen.size(), 5u);
}

TEST_F(BackendTest, UnsupportedBackendThrowsUsageError) {
    std::optional<pm::backend> unsupported;
    for (pm::backend b : pm::all_backends)
        if (!pm::cpu_supports(b)) unsupported = b;
    if (!unsupported) GTEST_SKIP() << "this CPU supports every backend";

    const pm::backend before = pm::current_backend();
    try {
        pm::set_backend(*unsupported);
        ADD_FAILURE() << "set_backend(" << pm::to_string(*unsupported) << ") did not throw";
    } catch (const ferrite::usage_error& e) {
        EXPECT_NE(std::string(e.what()).find(std::string(pm::to_string(*unsupported))),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(pm::current_backend(), before);
}

TEST_F(BackendTest, NoneAndEmulatedAreAlwaysSupported) {
    EXPECT_TRUE(pm::cpu_supports(pm::backend::none));
    EXPECT_TRUE(pm::cpu_supports(pm::backend::emulated));
}

TEST_F(BackendTest, DetectPicksTheBestSupportedFlush) {
    const pm::backend d = pm::detect_backend();
    EXPECT_TRUE(pm::cpu_supports(d));
    if (pm::cpu_supports(pm::backend::clwb))
        EXPECT_EQ(d, pm::backend::clwb);
    else if (pm::cpu_supports(pm::backend::clflushopt))
        EXPECT_EQ(d, pm::backend::clflushopt);
    else
        EXPECT_EQ(d, pm::backend::clflush);
}

TEST_F(BackendTest, SetBackendSwitchesAndSwitchesBack) {
    pm::set_backend(pm::backend::none);
    EXPECT_EQ(pm::current_backend(), pm::backend::none);
    pm::set_backend(pm::backend::emulated);
    EXPECT_EQ(pm::current_backend(), pm::backend::emulated);
    pm::set_backend(pm::detect_backend());
    EXPECT_EQ(pm::current_backend(), pm::detect_backend());
}

TEST(BackendNames, RoundTrip) {
    std::set<std::string> names;
    for (pm::backend b : pm::all_backends) {
        const auto name = pm::to_string(b);
        EXPECT_FALSE(name.empty());
        EXPECT_EQ(pm::backend_from_string(name), b) << name;
        names.emplace(name);
    }
    EXPECT_EQ(names.size(), std::size(pm::all_backends));
    EXPECT_EQ(pm::to_string(pm::backend::clwb), "clwb");
    EXPECT_EQ(pm::to_string(pm::backend::clflushopt), "clflushopt");
    EXPECT_EQ(pm::to_string(pm::backend::clflush), "clflush");
    EXPECT_EQ(pm::to_string(pm::backend::none), "none");
    EXPECT_EQ(pm::to_string(pm::backend::emulated), "emulated");
}

TEST(BackendNames, UnknownNameIsNullopt) {
    for (const char* s : {"", "CLWB", "clwb ", " clwb", "clflushop", "eadr", "emulate", "nonee"})
        EXPECT_FALSE(pm::backend_from_string(s).has_value()) << '"' << s << '"';
}

TEST_F(BackendTest, EmulatedLatencyRoundTrips) {
    EXPECT_EQ(pm::emulated_latency{}.pwb_ns, 100u);
    EXPECT_EQ(pm::emulated_latency{}.fence_ns, 0u);
    pm::set_emulated_latency({.pwb_ns = 1234, .fence_ns = 567});
    EXPECT_EQ(pm::current_emulated_latency().pwb_ns, 1234u);
    EXPECT_EQ(pm::current_emulated_latency().fence_ns, 567u);
}

using clock_type = std::chrono::steady_clock;

TEST_F(BackendTest, EmulatedPwbWaitsAtLeastItsLatency) {
    pm::set_backend(pm::backend::emulated);
    pm::set_emulated_latency({.pwb_ns = 2000, .fence_ns = 0});
    alignas(64) std::uint64_t word = 0;
    const auto start = clock_type::now();
    for (int i = 0; i < 1000; ++i) pm::pwb(&word);
    const auto elapsed = clock_type::now() - start;
    EXPECT_GE(elapsed, std::chrono::milliseconds(2));
    EXPECT_EQ(pm::thread_counters().pwb_lines, 1000u);
}

TEST_F(BackendTest, EmulatedPwbRangeWaitsPerLine) {
    pm::set_backend(pm::backend::emulated);
    pm::set_emulated_latency({.pwb_ns = 2000, .fence_ns = 0});
    struct alignas(64) block {
        unsigned char bytes[100 * 64];
    };
    static block b{};  // 6.4 KiB, off the stack
    const auto start = clock_type::now();
    for (int i = 0; i < 10; ++i) pm::pwb_range(b.bytes, sizeof b.bytes);  // 10 x 100 lines
    const auto elapsed = clock_type::now() - start;
    EXPECT_GE(elapsed, std::chrono::milliseconds(2));
    EXPECT_EQ(pm::thread_counters().pwb_lines, 1000u);
}

TEST_F(BackendTest, EmulatedFencesWaitAtLeastTheirLatency) {
    pm::set_backend(pm::backend::emulated);
    pm::set_emulated_latency({.pwb_ns = 0, .fence_ns = 2000});
    auto start = clock_type::now();
    for (int i = 0; i < 1000; ++i) pm::pfence();
    EXPECT_GE(clock_type::now() - start, std::chrono::milliseconds(2));
    start = clock_type::now();
    for (int i = 0; i < 1000; ++i) pm::psync();
    EXPECT_GE(clock_type::now() - start, std::chrono::milliseconds(2));
    EXPECT_EQ(pm::thread_counters(), (pm::counters{.pfences = 1000, .psyncs = 1000}));
}

}  // namespace
