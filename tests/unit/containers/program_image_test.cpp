// The CpNvm public API (containers/program_image.hpp) through a ferrite::store's catalog:
// a program's data at the same address after a reopen, eager and lazy loading, a crash
// (a child process that exits without closing) losing exactly what no checkpoint committed,
// roots and the in-image allocator, threads, refused misuse, the kind's validation and
// description, and a damaged image refused without a write.
#include "ferrite/containers/program_image.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "ferrite/containers/store.hpp"
#include "ferrite/error.hpp"

namespace {

using ferrite::image_options;
using ferrite::program_image;
using ferrite::store;
using u64 = std::uint64_t;
using namespace std::chrono_literals;

class ProgramImageTest : public ::testing::Test {
protected:
    void SetUp() override {
        path_ = "/dev/shm/ferrite-program-image-test-" + std::to_string(::getpid());
        std::filesystem::remove(path_);
    }
    void TearDown() override { std::filesystem::remove(path_); }
    store open() { return store::open_or_create(path_, "program-image-test", {.size = 64 << 20}); }
    static image_options small(bool lazy = false) {
        return {.image_bytes = 1 << 20, .max_threads = 4, .log_bytes = 64 << 10, .base = 0, .interval = 0ms, .lazy = lazy, .load_threads = 0, .before_commit = {}};
    }
    std::vector<char> bytes() const {
        std::ifstream in(path_, std::ios::binary);
        return {std::istreambuf_iterator<char>(in), {}};
    }
    std::string path_;
};

// Root "numbers": 64 u64 written as i * mult, marked, then committed by sync().
u64* fill_numbers(program_image& img, u64 mult) {
    auto* n = static_cast<u64*>(img.root("numbers"));
    if (n == nullptr) {
        n = static_cast<u64*>(img.allocate(64 * sizeof(u64)));
        img.set_root("numbers", n);
    }
    img.mark(n, 64 * sizeof(u64));
    for (u64 i = 0; i < 64; ++i) n[i] = i * mult;
    return n;
}

TEST_F(ProgramImageTest, DataSurviveAReopenAtTheSameAddress) {
    std::uintptr_t where = 0;
    {
        auto s = open();
        auto img = s.names().open<program_image>("app", small());
        EXPECT_FALSE(img->in_recovery());
        auto me = img->register_thread();
        where = reinterpret_cast<std::uintptr_t>(fill_numbers(*img, 3));
        img->sync();
        EXPECT_GE(img->committed_epoch(), 1u);
    }
    auto s = open();
    auto img = s.names().open<program_image>("app", small());
    EXPECT_TRUE(img->in_recovery());
    auto* n = static_cast<u64*>(img->root("numbers"));
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(n), where) << "the volatile image is mapped where it was";
    for (u64 i = 0; i < 64; ++i) ASSERT_EQ(n[i], i * 3);
}

// Background replay (the image's own replayer thread): sync() returns committed, the close
// drains the replay, and a reopen finds the last synced state.
TEST_F(ProgramImageTest, BackgroundReplayKeepsWhatEachSyncCommitted) {
    auto o = small();
    o.replay = ferrite::checkpoint::replay_mode::background;
    {
        auto s = open();
        auto img = s.names().open<program_image>("app", o);
        auto me = img->register_thread();
        fill_numbers(*img, 2);
        img->sync();
        const auto first = img->committed_epoch();
        fill_numbers(*img, 7);  // overwrites the same numbers: the next epoch's records
        img->sync();
        EXPECT_GT(img->committed_epoch(), first);
    }
    auto s = open();
    auto img = s.names().open<program_image>("app", small());
    auto* n = static_cast<u64*>(img->root("numbers"));
    ASSERT_NE(n, nullptr);
    for (u64 i = 0; i < 64; ++i) ASSERT_EQ(n[i], i * 7);
}
TEST_F(ProgramImageTest, LazyLoadingBringsInOnlyTheTouchedPages) {
    {
        auto s = open();
        auto img = s.names().open<program_image>("app", small());
        auto me = img->register_thread();
        fill_numbers(*img, 5);
        img->sync();
    }
    auto s = open();
    auto img = s.names().open<program_image>("app", small(true));
    EXPECT_EQ(img->pages_loaded(), 0u);
    auto* n = static_cast<u64*>(img->root("numbers"));  // touches the first page
    ASSERT_NE(n, nullptr);
    for (u64 i = 0; i < 64; ++i) ASSERT_EQ(n[i], i * 5);
    EXPECT_GE(img->pages_loaded(), 1u);
    EXPECT_LE(img->pages_loaded(), 3u) << "a 1 MiB image, two pages touched";
}

// A crash: a child process checkpoints, writes more without a checkpoint, and exits without
// closing anything. The reopened image holds the checkpointed state, not the later writes.
TEST_F(ProgramImageTest, ACrashLosesOnlyWhatNoCheckpointCommitted) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        auto s = open();
        auto img = s.names().open<program_image>("app", small());
        auto me = img->register_thread();
        auto* n = fill_numbers(*img, 7);
        img->sync();
        img->mark(n, 8);
        n[0] = 12345;  // never checkpointed
        std::_Exit(0);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    auto s = open();
    auto img = s.names().open<program_image>("app", small());
    EXPECT_TRUE(img->in_recovery());
    auto* n = static_cast<u64*>(img->root("numbers"));
    ASSERT_NE(n, nullptr);
    for (u64 i = 0; i < 64; ++i) ASSERT_EQ(n[i], i * 7) << "entry " << i;
}

TEST_F(ProgramImageTest, TheAllocatorReusesFreedBlocksAndRefusesWhatDoesNotFit) {
    auto s = open();
    auto img = s.names().open<program_image>("app", small());
    auto me = img->register_thread();
    void* a = img->allocate(100);  // a 128-byte block
    void* b = img->allocate(100);
    EXPECT_NE(a, b);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 64, 0u);
    img->deallocate(a, 100);
    EXPECT_EQ(img->allocate(120), a) << "the freed block of that size class comes back";
    void* c = img->allocate(536);  // 576 bytes (nine lines), not a power of two
    void* d = img->allocate(536);
    EXPECT_EQ(static_cast<std::byte*>(d) - static_cast<std::byte*>(c), 576);
    EXPECT_THROW(img->allocate(2 << 20), ferrite::out_of_memory);
    EXPECT_EQ(img->try_allocate(2 << 20), nullptr) << "try_allocate answers instead of throwing";
    EXPECT_EQ(program_image::block_bytes(536), 576u);
    EXPECT_EQ(program_image::block_bytes(4097), 8192u) << "above 4 KiB the classes are powers of two";
    EXPECT_EQ(program_image::block_bytes(0), 64u);
    EXPECT_THROW(img->set_root("x", &me), ferrite::usage_error) << "a root must point into the image";
    EXPECT_THROW(img->root(std::string(60, 'r')), ferrite::usage_error);
    img->set_root("b", b);
    EXPECT_EQ(img->root("b"), b);
    img->set_root("b", nullptr);
    EXPECT_EQ(img->root("b"), nullptr);
}

TEST_F(ProgramImageTest, ThreadsMustRegisterAndTheLogsAreLimited) {
    auto s = open();
    auto img = s.names().open<program_image>("app", small());
    EXPECT_THROW(img->checkpoint(), ferrite::usage_error) << "not registered";
    EXPECT_THROW(img->mark(img->data(), 8), ferrite::usage_error);
    auto me = img->register_thread();
    EXPECT_THROW(img->register_thread(), ferrite::usage_error) << "registered twice";
    std::vector<std::thread> others;
    std::atomic<int> registered{0}, refused{0};
    std::atomic<bool> release{false};
    for (int t = 0; t < 4; ++t)
        others.emplace_back([&] {
            try {
                auto scope = img->register_thread();
                ++registered;
                while (!release.load()) std::this_thread::yield();
            } catch (const ferrite::usage_error&) {
                ++refused;
            }
        });
    while (registered.load() + refused.load() < 4) std::this_thread::yield();
    release = true;
    for (auto& t : others) t.join();
    EXPECT_EQ(registered.load(), 3) << "four logs, one taken by this thread";
    EXPECT_EQ(refused.load(), 1);
}

TEST_F(ProgramImageTest, SeveralThreadsCheckpointTogether) {
    auto s = open();
    auto img = s.names().open<program_image>("app", small());
    std::vector<u64*> slots(3);
    {
        auto me = img->register_thread();
        for (auto& p : slots) p = static_cast<u64*>(img->allocate(64));
        img->set_root("slots", slots[0]);
        img->sync();
    }
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < 3; ++t)
        ts.emplace_back([&, t] {
            auto me = img->register_thread();
            for (u64 i = 1; i <= 200; ++i) {
                img->mark(slots[t], 8);
                *slots[t] = i;
                img->checkpoint();
            }
        });
    for (auto& t : ts) t.join();
    auto me = img->register_thread();
    img->sync();
    for (auto* p : slots) EXPECT_EQ(*p, 200u);
}

// A registered thread that waits for something else (here: the other thread's sync) quiesces
// first; without that, the other thread's sync would wait for it forever.
TEST_F(ProgramImageTest, AQuiescentThreadDoesNotHoldUpTheOthersCheckpoints) {
    auto s = open();
    auto img = s.names().open<program_image>("app", small());
    std::atomic<bool> synced{false};
    std::atomic<int> stage{0};
    std::thread waiter([&] {
        auto me = img->register_thread();
        stage = 1;
        {
            auto quiet = img->quiesce();
            stage = 2;
            while (!synced.load()) std::this_thread::yield();
        }
        auto* n = fill_numbers(*img, 11);  // writes again after its quiescent scope
        (void)n;
        img->sync();
    });
    {
        auto me = img->register_thread();
        while (stage.load() < 2) std::this_thread::yield();
        fill_numbers(*img, 9);
        img->sync();  // the waiter is quiescent: this commits without it
        synced = true;
    }
    waiter.join();
    auto* n = static_cast<u64*>(img->root("numbers"));
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n[5], 55u);
}

TEST_F(ProgramImageTest, TheKindValidatesAndDescribesTheImage) {
    {
        auto s = open();
        auto img = s.names().open<program_image>("app", small());
        auto me = img->register_thread();
        fill_numbers(*img, 1);
        img->sync();
    }
    auto s = open();
    bool found = false;
    for (const auto& o : s.names().list())
        if (o.name == "app") {
            found = true;
            EXPECT_EQ(o.kind, "program_image");
        }
    EXPECT_TRUE(found);
    EXPECT_NO_THROW(s.names().validate());
    for (const auto& c : s.names().check_objects()) {
        EXPECT_TRUE(c.problem.empty()) << c.name << ": " << c.problem;
        EXPECT_NE(c.detail.find("1024 KiB image at 0x"), std::string::npos) << c.detail;
    }
}

}  // namespace
