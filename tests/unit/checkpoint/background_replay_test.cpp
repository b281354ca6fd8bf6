// checkpointer, background replay (replay_mode::background): a checkpoint returns once its
// epoch committed and before it is applied; the replayer applies it from the logs; the next
// snapshot waits for that replay (a log holds one epoch); a crash between the commit and the
// replay is finished by recovery; the own replayer thread keeps up with several threads and
// is drained by the destructor.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include "ferrite/checkpoint/checkpointer.hpp"

namespace ferrite::checkpoint {
namespace {

using namespace std::chrono_literals;

struct aligned_bytes {
    explicit aligned_bytes(std::uint64_t n) : bytes(n), p(static_cast<std::byte*>(::operator new[](n, std::align_val_t{64}))) {
        std::memset(p, 0, n);
    }
    ~aligned_bytes() { ::operator delete[](p, std::align_val_t{64}); }
    aligned_bytes(const aligned_bytes&) = delete;
    aligned_bytes& operator=(const aligned_bytes&) = delete;
    std::uint64_t bytes;
    std::byte* p;
};

checkpoint_options background(bool own, std::function<void(std::uint64_t)> hook = {}) {
    checkpoint_options o{0ms, std::move(hook)};
    o.replay = replay_mode::background;
    o.own_replayer = own;
    return o;
}

struct fixture {
    explicit fixture(log_geometry g, checkpoint_options o)
        : region(region_bytes(g)), log(epoch_log::create(region.p, region.bytes, g)), image(g.image_bytes),
          cp(std::make_unique<checkpointer>(log, image.p, std::move(o))) {}
    bool images_equal() const { return std::memcmp(log.image(), image.p, image.bytes) == 0; }
    void write(unsigned t, std::uint64_t at, std::uint64_t n, int v) {
        cp->mark(t, image.p + at, n);
        std::memset(image.p + at, v, n);
    }
    aligned_bytes region;
    epoch_log log;
    aligned_bytes image;
    std::unique_ptr<checkpointer> cp;
};

TEST(BackgroundReplay, ACheckpointReturnsCommittedAndTheReplayerAppliesItFromTheLogs) {
    fixture f({1, 4096, 8192}, background(false));
    f.cp->join(0);
    f.write(0, 128, 200, 0x3a);
    EXPECT_TRUE(f.cp->checkpoint(0));
    EXPECT_EQ(f.cp->epoch(), 1u) << "durable: committed";
    EXPECT_EQ(f.log.applied_epoch(), 0u) << "not applied by the checkpoint";
    EXPECT_EQ(f.log.image()[128], std::byte{0});
    // The volatile image moves on; the replay must take the epoch's bytes from the log.
    f.write(0, 128, 8, 0x77);
    EXPECT_TRUE(f.cp->replay_pending());
    EXPECT_EQ(f.log.applied_epoch(), 1u);
    EXPECT_EQ(f.cp->replayed_epoch(), 1u);
    EXPECT_EQ(f.log.image()[128], std::byte{0x3a}) << "epoch 1's byte, not the volatile image's newer one";
    EXPECT_EQ(f.log.image()[327], std::byte{0x3a});
    EXPECT_EQ(f.log.image()[328], std::byte{0});
    EXPECT_FALSE(f.cp->replay_pending()) << "nothing more committed";
    EXPECT_TRUE(f.cp->checkpoint(0));
    EXPECT_TRUE(f.cp->replay_pending());
    EXPECT_TRUE(f.images_equal());
}

// The next snapshot would overwrite the log the replayer reads: it waits for the replay.
TEST(BackgroundReplay, TheNextSnapshotWaitsForThePreviousEpochsReplay) {
    fixture f({1, 4096, 8192}, background(false));
    f.cp->join(0);
    f.write(0, 0, 64, 1);
    ASSERT_TRUE(f.cp->checkpoint(0));
    std::atomic<bool> returned{false};
    std::thread worker([&] {
        f.write(0, 64, 64, 2);
        EXPECT_TRUE(f.cp->checkpoint(0));
        returned = true;
    });
    std::this_thread::sleep_for(50ms);
    EXPECT_FALSE(returned.load()) << "epoch 2 snapshotted over epoch 1's unreplayed log";
    EXPECT_EQ(f.cp->epoch(), 1u);
    EXPECT_TRUE(f.cp->replay_pending());
    worker.join();
    EXPECT_EQ(f.cp->epoch(), 2u);
    EXPECT_TRUE(f.cp->replay_pending());
    EXPECT_TRUE(f.images_equal());
}

// A crash after the commit and before the replay: recovery of the pool's bytes applies it.
TEST(BackgroundReplay, RecoveryAppliesACommittedEpochTheReplayerDidNotReach) {
    const log_geometry g{2, 4096, 8192};
    fixture f(g, background(false));
    f.cp->join(0);
    f.cp->join(1);
    std::thread other([&] {
        f.write(1, 4096, 300, 9);
        EXPECT_TRUE(f.cp->checkpoint(1));
    });
    f.write(0, 64, 100, 5);
    EXPECT_TRUE(f.cp->checkpoint(0));
    other.join();
    aligned_bytes crash(f.region.bytes);  // the pool as a crash now leaves it
    std::memcpy(crash.p, f.region.p, crash.bytes);
    auto log = epoch_log::open(crash.p, crash.bytes);
    EXPECT_EQ(log.committed_epoch(), 1u);
    EXPECT_EQ(log.applied_epoch(), 0u);
    const auto s = log.recover();
    EXPECT_EQ(s.epochs, 1u);
    EXPECT_EQ(s.records, 2u) << "one run per thread";
    EXPECT_EQ(log.applied_epoch(), 1u);
    EXPECT_EQ(std::memcmp(log.image(), f.image.p, g.image_bytes), 0);
    EXPECT_TRUE(f.cp->replay_pending());  // and the live process's replayer gets the same bytes
    EXPECT_EQ(std::memcmp(log.image(), f.log.image(), g.image_bytes), 0);
}

// Four threads (more than this machine's cores) in lockstep with the own replayer thread:
// every epoch commits, and the destructor drains the last one: the persistent image is then
// the volatile image as it was at the last commit.
TEST(BackgroundReplay, TheOwnReplayerKeepsUpWithManyThreadsAndIsDrainedAtTheEnd) {
    constexpr unsigned threads = 4;
    constexpr int rounds = 200;
    const log_geometry g{threads, 8192, threads * 4096};
    std::vector<std::vector<std::byte>> states(rounds + 1);  // the volatile image at each commit
    aligned_bytes* image = nullptr;
    fixture f(g, background(true, [&](std::uint64_t e) {
                  if (e < states.size()) states[e].assign(image->p, image->p + image->bytes);
              }));
    image = &f.image;
    for (unsigned t = 0; t < threads; ++t) f.cp->join(t);
    auto run = [&](unsigned t) {
        for (int r = 1; r <= rounds; ++r) {
            // a few lines of this thread's 4 KiB and a line shared by word with the others
            f.write(t, t * 4096 + static_cast<std::uint64_t>(r % 60) * 64, 64, r);
            f.write(t, t * 4096 + static_cast<std::uint64_t>((7 * r) % 60) * 64, 128, r + 1);
            f.cp->checkpoint(t);
        }
    };
    std::vector<std::thread> others;
    for (unsigned t = 1; t < threads; ++t) others.emplace_back(run, t);
    run(0);
    for (auto& th : others) th.join();
    EXPECT_EQ(f.cp->epoch(), static_cast<std::uint64_t>(rounds));
    const auto last = f.log.committed_epoch();
    f.cp.reset();  // drains: the own replayer applies the last epoch before it stops
    EXPECT_EQ(f.log.applied_epoch(), last);
    EXPECT_TRUE(f.images_equal());
    EXPECT_EQ(std::memcmp(f.log.image(), states[last].data(), g.image_bytes), 0);
}

}  // namespace
}  // namespace ferrite::checkpoint
