// The persistence observer hook (observer.hpp): while installed, every primitive reaches it
// with the 64-byte-aligned line and the caller's source location (nt_store having stored the
// value first); after uninstalling, calls no longer reach it.
#include "ferrite/pmem/observer.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <source_location>
#include <string>
#include <vector>

#include "ferrite/pmem/backend.hpp"
#include "ferrite/pmem/primitives.hpp"
#include "test_support.hpp"

namespace pm = ferrite::pmem;

namespace {

enum class kind { pwb, pfence, psync, nt_store };

struct event {
    kind what;
    const void* addr;         // line (pwb) or destination (nt_store)
    std::size_t bytes;        // nt_store only
    std::uint64_t value;      // nt_store only: the word at addr when the observer was called
    std::uint_least32_t line;
    std::string file;
};

class recording_observer final : public pm::persistence_observer {
public:
    std::vector<event> events;

    void on_pwb(const void* line, const pm::site& where) noexcept override {
        events.push_back({kind::pwb, line, 0, 0, where.line(), where.file_name()});
    }
    void on_pfence(const pm::site& where) noexcept override {
        events.push_back({kind::pfence, nullptr, 0, 0, where.line(), where.file_name()});
    }
    void on_psync(const pm::site& where) noexcept override {
        events.push_back({kind::psync, nullptr, 0, 0, where.line(), where.file_name()});
    }
    void on_nt_store(void* dst, std::size_t bytes, const pm::site& where) noexcept override {
        std::uint64_t v = 0;
        if (bytes == sizeof v) std::memcpy(&v, dst, sizeof v);
        events.push_back({kind::nt_store, dst, bytes, v, where.line(), where.file_name()});
    }
};

bool is_this_file(const std::string& file) {
    const std::string name = "observer_test.cpp";
    return file.size() >= name.size() && file.compare(file.size() - name.size(), name.size(), name) == 0;
}

const void* line_of(const void* p) {
    return reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t{63});
}

class ObserverTest : public ferrite_test::backend_test {
protected:
    void SetUp() override {
        backend_test::SetUp();
        ASSERT_EQ(pm::install_observer(&obs), nullptr) << "an observer was already installed";
        ASSERT_EQ(pm::installed_observer(), &obs);
    }
    void TearDown() override {
        pm::install_observer(nullptr);
        backend_test::TearDown();
    }
    recording_observer obs;
};

struct alignas(64) lines {
    std::array<unsigned char, 4 * 64> bytes;
};

TEST_F(ObserverTest, PwbReportsAlignedLineAndCallSite) {
    lines buf{};
    const auto here = std::source_location::current().line(); pm::pwb(&buf.bytes[70]);
    ASSERT_EQ(obs.events.size(), 1u);
    const event& e = obs.events[0];
    EXPECT_EQ(e.what, kind::pwb);
    EXPECT_EQ(e.addr, &buf.bytes[64]);
    EXPECT_EQ(e.line, here);
    EXPECT_TRUE(is_this_file(e.file)) << e.file;
    EXPECT_EQ(pm::thread_counters(), (pm::counters{.pwb_lines = 1}));

    const auto here2 = std::source_location::current().line(); pm::pwb(&buf.bytes[64 * 3 + 63]);
    ASSERT_EQ(obs.events.size(), 2u);
    EXPECT_EQ(obs.events[1].addr, &buf.bytes[64 * 3]);
    EXPECT_EQ(obs.events[1].line, here2);
    EXPECT_NE(here, here2);
}

TEST_F(ObserverTest, PwbRangeReportsEveryLineOnceWithTheCallSite) {
    lines buf{};
    const auto here = std::source_location::current().line(); pm::pwb_range(&buf.bytes[60], 70);
    // bytes 60..129: lines 0, 64 and 128
    ASSERT_EQ(obs.events.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(obs.events[i].what, kind::pwb);
        EXPECT_EQ(obs.events[i].addr, &buf.bytes[64 * i]);
        EXPECT_EQ(obs.events[i].line, here);
        EXPECT_TRUE(is_this_file(obs.events[i].file)) << obs.events[i].file;
    }
    EXPECT_EQ(pm::thread_counters(), (pm::counters{.pwb_lines = 3}));

    obs.events.clear();
    pm::pwb_range(&buf.bytes[10], 0);
    EXPECT_TRUE(obs.events.empty());
}

TEST_F(ObserverTest, PfenceAndPsyncReportTheCallSite) {
    const auto l1 = std::source_location::current().line(); pm::pfence();
    const auto l2 = std::source_location::current().line(); pm::psync();
    ASSERT_EQ(obs.events.size(), 2u);
    EXPECT_EQ(obs.events[0].what, kind::pfence);
    EXPECT_EQ(obs.events[0].line, l1);
    EXPECT_TRUE(is_this_file(obs.events[0].file)) << obs.events[0].file;
    EXPECT_EQ(obs.events[1].what, kind::psync);
    EXPECT_EQ(obs.events[1].line, l2);
    EXPECT_EQ(pm::thread_counters(), (pm::counters{.pfences = 1, .psyncs = 1}));
}

TEST_F(ObserverTest, NtStoreStoresTheValueBeforeReporting) {
    alignas(64) std::uint64_t words[8] = {};
    const auto here = std::source_location::current().line(); pm::nt_store(&words[5], 0xabcdef0123456789ull);
    EXPECT_EQ(words[5], 0xabcdef0123456789ull);
    ASSERT_EQ(obs.events.size(), 1u);
    const event& e = obs.events[0];
    EXPECT_EQ(e.what, kind::nt_store);
    EXPECT_EQ(e.addr, &words[5]);
    EXPECT_EQ(e.bytes, 8u);
    EXPECT_EQ(e.value, 0xabcdef0123456789ull) << "the value was not stored when the observer ran";
    EXPECT_EQ(e.line, here);
    EXPECT_TRUE(is_this_file(e.file)) << e.file;
    EXPECT_EQ(pm::thread_counters(), (pm::counters{.nt_stores = 1}));
}

TEST_F(ObserverTest, NtMemcpyReportsHeadWordsAndTail) {
    lines dst{};
    const char src[] = "forty bytes of data, copied with NT st.";
    static_assert(sizeof src == 40);
    unsigned char* d = &dst.bytes[64 + 3];  // head 5 bytes, 4 words, tail 3 bytes
    const auto here = std::source_location::current().line(); pm::nt_memcpy(d, src, sizeof src);

    EXPECT_EQ(std::memcmp(d, src, sizeof src), 0);
    ASSERT_EQ(obs.events.size(), 6u);
    EXPECT_EQ(obs.events[0].what, kind::pwb);
    EXPECT_EQ(obs.events[0].addr, line_of(d));
    for (std::size_t i = 0; i < 4; ++i) {
        const event& e = obs.events[1 + i];
        EXPECT_EQ(e.what, kind::nt_store);
        EXPECT_EQ(e.addr, d + 5 + 8 * i);
        EXPECT_EQ(e.bytes, 8u);
        std::uint64_t expected = 0;
        std::memcpy(&expected, src + 5 + 8 * i, 8);
        EXPECT_EQ(e.value, expected);
    }
    EXPECT_EQ(obs.events[5].what, kind::pwb);
    EXPECT_EQ(obs.events[5].addr, line_of(d + 37));
    for (const event& e : obs.events) {
        EXPECT_EQ(e.line, here);
        EXPECT_TRUE(is_this_file(e.file)) << e.file;
    }
    EXPECT_EQ(pm::thread_counters(), (pm::counters{.pwb_lines = 2, .nt_stores = 4}));
}

// nt_copy_lines: one nt_store event of all its bytes, reported after they are stored.
TEST_F(ObserverTest, NtCopyLinesReportsOneStoreOfItsBytes) {
    lines dst{};
    std::array<unsigned char, 128 + 1> src{};
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 5 + 1);
    const auto here = std::source_location::current().line(); pm::nt_copy_lines(&dst.bytes[64], src.data() + 1, 128);

    EXPECT_EQ(std::memcmp(&dst.bytes[64], src.data() + 1, 128), 0);
    ASSERT_EQ(obs.events.size(), 1u);
    EXPECT_EQ(obs.events[0].what, kind::nt_store);
    EXPECT_EQ(obs.events[0].addr, &dst.bytes[64]);
    EXPECT_EQ(obs.events[0].bytes, 128u);
    EXPECT_EQ(obs.events[0].line, here);
    EXPECT_TRUE(is_this_file(obs.events[0].file)) << obs.events[0].file;
    EXPECT_EQ(pm::thread_counters(), (pm::counters{.nt_stores = 16}));
}

TEST_F(ObserverTest, ObserverWinsOverEveryBackend) {
    for (pm::backend b : pm::all_backends) {
        if (!pm::cpu_supports(b)) continue;
        pm::set_backend(b);
        obs.events.clear();
        lines buf{};
        pm::pwb(&buf.bytes[1]);
        pm::pfence();
        EXPECT_EQ(obs.events.size(), 2u) << "backend " << pm::to_string(b);
    }
}

TEST_F(ObserverTest, UninstallStopsTheCalls) {
    EXPECT_EQ(pm::install_observer(nullptr), &obs);
    EXPECT_EQ(pm::installed_observer(), nullptr);

    lines buf{};
    alignas(8) std::uint64_t word = 0;
    const char src[] = "0123456789abcdefghij";
    pm::pwb(&buf.bytes[0]);
    pm::pwb_range(&buf.bytes[0], 200);
    pm::pfence();
    pm::psync();
    pm::nt_store(&word, 77);
    pm::nt_memcpy(&buf.bytes[1], src, sizeof src);
    pm::pfence();
    EXPECT_TRUE(obs.events.empty()) << obs.events.size() << " calls reached a removed observer";
    EXPECT_EQ(word, 77u);
    EXPECT_EQ(std::memcmp(&buf.bytes[1], src, sizeof src), 0);
    EXPECT_EQ(pm::thread_counters().pfences, 2u);  // still counted
}

TEST_F(ObserverTest, InstallReturnsThePreviousObserver) {
    recording_observer second;
    EXPECT_EQ(pm::install_observer(&second), &obs);
    EXPECT_EQ(pm::installed_observer(), &second);
    pm::pfence();
    EXPECT_TRUE(obs.events.empty());
    EXPECT_EQ(second.events.size(), 1u);
    EXPECT_EQ(pm::install_observer(&obs), &second);
    pm::psync();
    EXPECT_EQ(obs.events.size(), 1u);
    EXPECT_EQ(second.events.size(), 1u);
}

}  // namespace
