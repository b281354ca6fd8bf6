// checkpointer: marking, due checkpoints, the barrier with several threads (more than this
// machine's cores), join/leave, and the refusal of an epoch that cannot fit in a log. The
// persistent image after a checkpoint must equal the volatile image.
#include "ferrite/checkpoint/checkpointer.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ferrite/error.hpp"

namespace ferrite::checkpoint {
namespace {

using namespace std::chrono_literals;

struct aligned_bytes {
    explicit aligned_bytes(std::uint64_t n, int fill = 0)
        : bytes(n), p(static_cast<std::byte*>(::operator new[](n, std::align_val_t{64}))) {
        std::memset(p, fill, n);
    }
    ~aligned_bytes() { ::operator delete[](p, std::align_val_t{64}); }
    aligned_bytes(const aligned_bytes&) = delete;
    aligned_bytes& operator=(const aligned_bytes&) = delete;
    std::uint64_t bytes;
    std::byte* p;
};

struct fixture {
    explicit fixture(log_geometry g, checkpoint_options o = {0ms, {}})
        : region(region_bytes(g)), log(epoch_log::create(region.p, region.bytes, g)), image(g.image_bytes),
          cp(log, image.p, o) {}
    bool images_equal() const { return std::memcmp(log.image(), image.p, image.bytes) == 0; }
    aligned_bytes region;
    epoch_log log;
    aligned_bytes image;
    checkpointer cp;
};

TEST(Checkpointer, AMarkedWriteIsInThePersistentImageAfterTheCheckpoint) {
    fixture f({1, 4096, 4096});
    f.cp.join(0);
    auto* p = f.image.p + 200;
    f.cp.mark(0, p, 100);  // lines 3..4
    std::memset(p, 0x5c, 100);
    EXPECT_TRUE(f.cp.checkpoint(0));
    EXPECT_EQ(f.cp.epoch(), 1u);
    EXPECT_TRUE(f.images_equal());
    const auto s = f.cp.stats();
    EXPECT_EQ(s.epochs, 1u);
    EXPECT_EQ(s.records, 1u) << "two adjacent lines are one record";
    EXPECT_EQ(s.bytes, 128u);
    // An unmarked write is not checkpointed (the program's contract: mark first).
    f.image.p[1000] = std::byte{1};
    EXPECT_TRUE(f.cp.checkpoint(0));
    EXPECT_EQ(f.log.image()[1000], std::byte{0});
}

TEST(Checkpointer, ACheckpointIsDueAfterTheIntervalOrWhenRequested) {
    fixture f({1, 4096, 4096}, {1h, {}});
    f.cp.join(0);
    f.cp.mark(0, f.image.p, 8);
    f.image.p[0] = std::byte{7};
    EXPECT_FALSE(f.cp.checkpoint(0)) << "the interval has not passed";
    EXPECT_EQ(f.cp.epoch(), 0u);
    f.cp.request();
    EXPECT_TRUE(f.cp.checkpoint(0));
    EXPECT_EQ(f.log.image()[0], std::byte{7});
    EXPECT_FALSE(f.cp.checkpoint(0)) << "the request is used up";
}

// An interval in which nothing was marked commits nothing (the interval starts again, no
// barrier); one with a marked line commits it once the interval has passed. 64 ms: the coarse
// clock at Linux's usual tick (checkpointer.cpp), the clock cpnvm-tree's interval reads.
TEST(Checkpointer, AnIntervalWithNothingMarkedCommitsNothing) {
    fixture f({1, 4096, 4096}, {64ms, {}});
    f.cp.join(0);
    const auto calls = [&f] {  // enough calls for the clock to be read (every 16th)
        bool committed = false;
        for (int i = 0; i < 32; ++i) committed = f.cp.checkpoint(0) || committed;
        return committed;
    };
    std::this_thread::sleep_for(70ms);
    EXPECT_FALSE(calls()) << "nothing marked: no epoch";
    EXPECT_EQ(f.cp.epoch(), 0u);
    f.cp.mark(0, f.image.p + 64, 8);
    f.image.p[64] = std::byte{5};
    EXPECT_FALSE(calls()) << "the interval started again when it passed with nothing marked";
    std::this_thread::sleep_for(70ms);
    EXPECT_TRUE(calls()) << "a marked line and the interval passed: an epoch";
    EXPECT_EQ(f.cp.epoch(), 1u);
    EXPECT_EQ(f.log.image()[64], std::byte{5});
    std::this_thread::sleep_for(70ms);
    EXPECT_FALSE(calls()) << "the committed line is not marked any more";
    EXPECT_EQ(f.cp.epoch(), 1u);
}

TEST(Checkpointer, MarkingOutsideTheImageIsAUsageError) {
    fixture f({1, 4096, 4096});
    f.cp.join(0);
    EXPECT_THROW(f.cp.mark(0, f.image.p + 4096, 1), usage_error);
    EXPECT_THROW(f.cp.mark(0, f.image.p + 4000, 200), usage_error);
    EXPECT_THROW(f.cp.join(1), usage_error) << "one log, one thread";
    EXPECT_THROW(f.cp.join(0), usage_error) << "joined twice";
}

TEST(Checkpointer, AnEpochThatCannotFitIsRefusedByEveryThread) {
    fixture f({2, 256, 8192});
    f.cp.join(0);
    f.cp.join(1);
    f.cp.mark(0, f.image.p, 1024);  // 16 lines: far more than a 256-byte log holds
    std::memset(f.image.p, 1, 1024);
    std::atomic<bool> other_returned{false};
    std::thread other([&] {
        f.cp.mark(1, f.image.p + 4096, 8);
        EXPECT_FALSE(f.cp.checkpoint(1)) << "it took part in a refused checkpoint";
        other_returned = true;
    });
    EXPECT_THROW(f.cp.checkpoint(0), usage_error);
    other.join();
    EXPECT_TRUE(other_returned.load());
    EXPECT_EQ(f.cp.epoch(), 0u) << "nothing committed";
    EXPECT_EQ(f.log.image()[0], std::byte{0});
}

// A failure between the barriers used to leave the others waiting for ever (the throwing
// thread never released barrier 2). Now every participant throws the first failure, later
// checkpoints throw it too, leaving still works, and the last committed epoch stands.
TEST(Checkpointer, AFailureInsideACheckpointReachesEveryParticipantInsteadOfHangingThem) {
    std::atomic<std::uint64_t> fail_at{2};
    fixture f({2, 4096, 8192}, {0ms, [&](std::uint64_t epoch) {
                                    if (epoch == fail_at.load()) throw std::runtime_error("the commit hook failed");
                                }});
    f.cp.join(0);
    f.cp.join(1);
    auto run = [&](unsigned t, std::atomic<int>& failures) {
        for (int round = 0; round < 3; ++round) {
            f.cp.mark(t, f.image.p + 4096 * t, 8);
            f.image.p[4096 * t] = static_cast<std::byte>(round + 1);
            try {
                f.cp.checkpoint(t);
            } catch (const error& e) {
                EXPECT_NE(std::string(e.what()).find("the commit hook failed"), std::string::npos) << e.what();
                ++failures;
                return;
            }
        }
    };
    std::atomic<int> failures0{0}, failures1{0};
    std::thread other([&] { run(1, failures1); });
    run(0, failures0);
    other.join();  // before the fix: never returned
    EXPECT_EQ(failures0.load(), 1);
    EXPECT_EQ(failures1.load(), 1);
    EXPECT_EQ(f.cp.epoch(), 1u) << "epoch 2 was never committed";
    EXPECT_EQ(f.log.image()[0], std::byte{1});
    EXPECT_THROW(f.cp.checkpoint(0), error) << "the checkpointer stays failed";
    EXPECT_NO_THROW(f.cp.leave(0));
    EXPECT_NO_THROW(f.cp.leave(1));
}

// Threads in lockstep (interval 0), more of them than cores: each writes its own lines and
// a shared counter line under a mutex; after every checkpoint the images agree.
TEST(Checkpointer, ManyThreadsCheckpointInLockstepAndTheImagesAgree) {
    constexpr unsigned n = 4;
    constexpr int rounds = 300;
    fixture f({n, 4096, 64 * (n * 4 + 1)});
    for (unsigned t = 0; t < n; ++t) f.cp.join(t);
    std::mutex shared_mutex;
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < n; ++t)
        ts.emplace_back([&, t] {
            for (int r = 0; r < rounds; ++r) {
                auto* mine = f.image.p + 64 * (1 + t * 4 + r % 4);
                f.cp.mark(t, mine, 64);
                std::memset(mine, r & 0xff, 64);
                {
                    std::lock_guard g(shared_mutex);
                    auto* counter = reinterpret_cast<std::uint64_t*>(f.image.p);
                    f.cp.mark(t, counter, 8);
                    ++*counter;
                }
                EXPECT_TRUE(f.cp.checkpoint(t));
            }
        });
    for (auto& th : ts) th.join();
    EXPECT_EQ(f.cp.epoch(), static_cast<std::uint64_t>(rounds));
    EXPECT_TRUE(f.images_equal());
    std::uint64_t counter = 0;
    std::memcpy(&counter, f.log.image(), 8);
    EXPECT_EQ(counter, std::uint64_t{n} * rounds);
}

// Threads with their own pace (an interval), leaving at different times: a leaving thread's
// marks still reach the persistent image, and the others never wait for a thread that left.
TEST(Checkpointer, ThreadsLeaveAtDifferentTimesAndTheirMarksArePersisted) {
    constexpr unsigned n = 3;
    fixture f({n, 1 << 16, 64 * 64}, {1ms, {}});
    for (unsigned t = 0; t < n; ++t) f.cp.join(t);
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < n; ++t)
        ts.emplace_back([&, t] {
            const int ops = 2000 * static_cast<int>(t + 1);
            for (int i = 0; i < ops; ++i) {
                auto* l = f.image.p + 64 * (t * 20 + i % 20);
                f.cp.mark(t, l, 64);
                std::memset(l, (i + static_cast<int>(t)) & 0xff, 64);
                f.cp.checkpoint(t);
            }
            f.cp.leave(t);
        });
    for (auto& th : ts) th.join();
    EXPECT_TRUE(f.images_equal()) << "every thread's last writes were checkpointed when it left";
    EXPECT_GE(f.cp.epoch(), 1u);
}


// Many scattered marks in random order, overlapping, across bitmap words and from two
// threads in one epoch: the snapshot sorts each thread's runs (radix sort past 64 runs),
// joins adjacent ones and logs each line exactly once (by the thread whose mark set its
// bit); the persistent image equals the volatile one, and the records are the maximal runs.
TEST(Checkpointer, ScatteredMarksFromTwoThreadsAreLoggedOnceAsJoinedRuns) {
    constexpr std::uint64_t lines = 1 << 16;  // 4 MiB image: two radix passes (line numbers >= 4096)
    fixture f({2, 1 << 20, lines * 64});
    f.cp.join(0);
    f.cp.join(1);
    std::uint64_t state = 7;
    const auto next = [&state] {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return state >> 33;
    };
    for (int round = 0; round < 3; ++round) {
        std::vector<bool> marked(lines);
        for (int i = 0; i < 3000; ++i) {
            const std::uint64_t first = next() % (lines - 8), n = 1 + next() % 200, at = first * 64 + next() % 64;
            const unsigned t = round == 0 ? 0 : static_cast<unsigned>(next() % 2);  // round 0: one thread
            f.cp.mark(t, f.image.p + at, n);
            std::memset(f.image.p + at, (round * 31 + i) & 0xff, n);
            for (std::uint64_t l = first; l <= (at + n - 1) / 64; ++l) marked[l] = true;
        }
        std::uint64_t runs = 0;
        for (std::uint64_t l = 0; l < lines; ++l) runs += marked[l] && (l == 0 || !marked[l - 1]);
        const auto before = f.cp.stats();
        std::thread other([&] { EXPECT_TRUE(f.cp.checkpoint(1)); });
        EXPECT_TRUE(f.cp.checkpoint(0));
        other.join();
        EXPECT_TRUE(f.images_equal()) << "round " << round;
        const auto s = f.cp.stats();
        std::uint64_t marked_lines = 0;
        for (std::uint64_t l = 0; l < lines; ++l) marked_lines += marked[l];
        EXPECT_EQ(s.bytes - before.bytes, marked_lines * 64) << "every marked line logged once, by one thread";
        if (round == 0) {
            EXPECT_EQ(s.records - before.records, runs) << "one thread: one record per maximal run";
        }
        EXPECT_GE(s.records - before.records, runs);
    }
}

// Resident pages of this process (the second field of /proc/self/statm).
std::uint64_t resident_pages() {
    std::ifstream statm("/proc/self/statm");
    std::uint64_t size = 0, resident = 0;
    statm >> size >> resident;
    return resident;
}

// A checkpointer writes nothing per line of its image when made (its bitmap is the kernel's
// zero pages until a mark), so opening a large image does not take longer than a small one
// for it. 256 MiB of image: a zeroed bitmap would be 512 KiB, and the bound is half of that.
// (With 64 MiB and a 64 KiB bound, ASan's allocator's own first-use pages, 104-116 KiB in
// about half the runs, failed it: the signal must stand well above the allocator's noise.)
TEST(Checkpointer, MakingOneTakesNoMemoryPerLine) {
    const log_geometry g{1, 4096, std::uint64_t{256} << 20};
    const std::uint64_t bitmap_bytes = g.image_bytes / 64 / 8;
    aligned_bytes region(region_bytes(g));
    auto log = epoch_log::create(region.p, region.bytes, g);
    aligned_bytes image(g.image_bytes);
    const auto before = resident_pages();
    checkpointer cp(log, image.p, {0ms, {}});
    const auto grew = (resident_pages() - before) * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    EXPECT_LT(grew, bitmap_bytes / 2);
    cp.join(0);
    cp.mark(0, image.p + g.image_bytes - 64, 64);  // the bitmap's last word works
    std::memset(image.p + g.image_bytes - 64, 9, 64);
    EXPECT_TRUE(cp.checkpoint(0));
    EXPECT_EQ(std::memcmp(log.image() + g.image_bytes - 64, image.p + g.image_bytes - 64, 64), 0);
}

}  // namespace
}  // namespace ferrite::checkpoint
