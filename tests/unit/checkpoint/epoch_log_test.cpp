// epoch_log: records, commit, replay, recovery, validation of what is read back, and the
// persistence instructions each step costs. The crash behaviour is the crash target's
// (crash/checkpoint/cpnvm_counter_target.cpp); here the region is plain memory.
#include "ferrite/checkpoint/epoch_log.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "ferrite/error.hpp"
#include "ferrite/pmem/checksum.hpp"
#include "ferrite/pmem/counters.hpp"

namespace ferrite::checkpoint {
namespace {

struct region {
    explicit region(std::uint64_t n) : bytes(n), p(static_cast<std::byte*>(::operator new[](n, std::align_val_t{64}))) {
        std::memset(p, 0xa5, n);  // not zero: create must not rely on fresh memory
    }
    ~region() { ::operator delete[](p, std::align_val_t{64}); }
    region(const region&) = delete;
    region& operator=(const region&) = delete;
    std::vector<std::byte> copy() const { return {p, p + bytes}; }
    std::uint64_t bytes;
    std::byte* p;
};

const log_geometry small{2, 512, 1024};

std::vector<std::byte> pattern(std::size_t n, int seed) {
    std::vector<std::byte> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 31 + static_cast<std::size_t>(seed) * 7) & 0xff);
    return v;
}

TEST(EpochLog, GeometryOutOfRangeIsAUsageError) {
    EXPECT_THROW(region_bytes({0, 512, 1024}), usage_error);
    EXPECT_THROW(region_bytes({257, 512, 1024}), usage_error);
    EXPECT_THROW(region_bytes({1, 100, 1024}), usage_error);
    EXPECT_THROW(region_bytes({1, 64, 1024}), usage_error);
    EXPECT_THROW(region_bytes({1, 512, 0}), usage_error);
    EXPECT_THROW(region_bytes({1, 512, 1000}), usage_error);
    EXPECT_EQ(region_bytes(small), 3 * 64 + 2 * 512 + 1024u);
    region r(region_bytes(small) - 64);
    EXPECT_THROW(epoch_log::create(r.p, r.bytes, small), usage_error) << "a region too small";
}

TEST(EpochLog, CreateThenOpenSeesAnEmptyZeroedLog) {
    region r(region_bytes(small));
    auto log = epoch_log::create(r.p, r.bytes, small);
    EXPECT_EQ(log.committed_epoch(), 0u);
    EXPECT_EQ(log.applied_epoch(), 0u);
    auto again = epoch_log::open(r.p, r.bytes);
    EXPECT_EQ(again.geometry().threads, 2u);
    EXPECT_EQ(again.geometry().log_bytes, 512u);
    EXPECT_EQ(again.geometry().image_bytes, 1024u);
    for (std::uint64_t i = 0; i < 1024; ++i) ASSERT_EQ(again.image()[i], std::byte{0});
    EXPECT_EQ(again.recover().records, 0u) << "nothing to replay in a fresh log, whatever its memory held";
}

TEST(EpochLog, ACommittedEpochReachesTheImageAtReplayAndTheLogsEmpty) {
    region r(region_bytes(small));
    auto log = epoch_log::create(r.p, r.bytes, small);
    const auto a = pattern(128, 1), b = pattern(64, 2);
    ASSERT_TRUE(log.append(0, 1, 0, a.data(), 128));
    ASSERT_TRUE(log.append(1, 1, 512, b.data(), 64));
    EXPECT_EQ(log.log_used(0), epoch_log::record_bytes(128) - 64) << "a header line and two lines; the end marker comes at seal";
    log.seal(0);
    log.seal(1);
    log.commit(1);
    EXPECT_EQ(log.image()[0], std::byte{0}) << "the image changes at replay, not at commit";
    const auto s = log.replay();
    EXPECT_EQ(s.epochs, 1u);
    EXPECT_EQ(s.records, 2u);
    EXPECT_EQ(s.bytes, 192u);
    EXPECT_EQ(std::memcmp(log.image(), a.data(), 128), 0);
    EXPECT_EQ(std::memcmp(log.image() + 512, b.data(), 64), 0);
    EXPECT_EQ(log.applied_epoch(), 1u);
    EXPECT_EQ(log.log_used(0), 0u);
    EXPECT_THROW(log.commit(1), usage_error) << "an epoch commits once";
}

TEST(EpochLog, RecoveryReplaysTheCommittedEpochAndDropsTheUncommittedOne) {
    region r(region_bytes(small));
    {
        auto log = epoch_log::create(r.p, r.bytes, small);
        const auto a = pattern(64, 3), b = pattern(64, 4);
        ASSERT_TRUE(log.append(0, 1, 64, a.data(), 64));
        log.seal(0);
        log.commit(1);  // committed, not replayed: the crash comes here
        ASSERT_TRUE(log.append(1, 2, 128, b.data(), 64));  // epoch 2 never commits
    }
    auto log = epoch_log::open(r.p, r.bytes);
    const auto s = log.recover();
    EXPECT_EQ(s.records, 1u);
    EXPECT_EQ(std::memcmp(log.image() + 64, pattern(64, 3).data(), 64), 0);
    for (int i = 128; i < 192; ++i) ASSERT_EQ(log.image()[i], std::byte{0}) << "epoch 2's record is dropped";
    EXPECT_EQ(log.recover().records, 0u) << "recovering again finds nothing left";
}

// A log of format version 1 or 2 (24-byte record headers, not line-aligned: written by an
// older build) is refused with an error naming its format, and nothing is written; so is a
// version this build does not know.
TEST(EpochLog, AnOlderFormatIsRefusedNamingItWritingNothing) {
    const auto make = [](region& r, std::uint32_t as_version) {
        auto log = epoch_log::create(r.p, r.bytes, small);
        const auto a = pattern(64, 3);
        ASSERT_TRUE(log.append(0, 1, 64, a.data(), 64));
        log.seal(0);
        log.commit(1);  // not replayed: a recovery would write the image
        std::memcpy(r.p + 8, &as_version, 4);
        const std::uint64_t id_checksum = pmem::fnv1a64(r.p, 32);
        std::memcpy(r.p + 32, &id_checksum, 8);
    };
    for (const std::uint32_t v : {1u, 2u, 4u}) {
        region r(region_bytes(small));
        make(r, v);
        const auto before = r.copy();
        try {
            epoch_log::open(r.p, r.bytes).recover();
            ADD_FAILURE() << "a version " << v << " log was opened";
        } catch (const damaged_pool& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find("format version " + std::to_string(v)), std::string::npos) << what;
            EXPECT_NE(what.find("reads version 3"), std::string::npos) << what;
            if (v < 3) {
                EXPECT_NE(what.find("not line-aligned"), std::string::npos) << what;
            }
        }
        EXPECT_EQ(r.copy(), before) << "version " << v << ": a refused open wrote something";
    }
    region ok(region_bytes(small));
    make(ok, 3);
    auto log = epoch_log::open(ok.p, ok.bytes);
    EXPECT_EQ(log.recover().records, 1u);
    EXPECT_EQ(std::memcmp(log.image() + 64, pattern(64, 3).data(), 64), 0);
}

// Records are whole lines of the image; anything else is the caller's error.
TEST(EpochLog, ARecordThatIsNotWholeLinesIsAUsageError) {
    region r(region_bytes(small));
    auto log = epoch_log::create(r.p, r.bytes, small);
    const auto a = pattern(128, 4);
    EXPECT_THROW(log.append(0, 1, 0, a.data(), 100), usage_error);
    EXPECT_THROW(log.append(0, 1, 8, a.data(), 64), usage_error);
    EXPECT_EQ(log.log_used(0), 0u);
}

// Seven records make two blocks (a header line holds six); a block of an epoch is closed
// when the next epoch's record comes, and the replay finds every record.
TEST(EpochLog, RecordsFillBlocksOfSixAndReplayInOrder) {
    const log_geometry g{1, 4096, 2048};
    region r(region_bytes(g));
    auto log = epoch_log::create(r.p, r.bytes, g);
    std::vector<std::vector<std::byte>> lines;
    for (int i = 0; i < 7; ++i) {
        lines.push_back(pattern(64, 20 + i));
        ASSERT_TRUE(log.append(0, 1, static_cast<std::uint64_t>(i) * 128, lines.back().data(), 64));
    }
    EXPECT_EQ(log.log_used(0), 2 * 64 + 7 * 64u) << "two header lines, seven record lines";
    log.seal(0);
    log.commit(1);
    auto reopened = epoch_log::open(r.p, r.bytes);
    const auto s = reopened.recover();
    EXPECT_EQ(s.records, 7u);
    for (int i = 0; i < 7; ++i)
        EXPECT_EQ(std::memcmp(reopened.image() + i * 128, lines[static_cast<std::size_t>(i)].data(), 64), 0) << i;
}

TEST(EpochLog, AReusedLogEndsAtTheNewestRecordsEndMarker) {
    region r(region_bytes(small));
    auto log = epoch_log::create(r.p, r.bytes, small);
    const auto big = pattern(256, 5), small_rec = pattern(64, 6);
    ASSERT_TRUE(log.append(0, 1, 0, big.data(), 256));
    log.seal(0);
    log.commit(1);
    log.replay();
    ASSERT_TRUE(log.append(0, 2, 640, small_rec.data(), 64));  // shorter: epoch 1's tail stays behind it
    log.seal(0);
    log.commit(2);
    auto reopened = epoch_log::open(r.p, r.bytes);
    const auto s = reopened.recover();
    EXPECT_EQ(s.records, 1u);
    EXPECT_EQ(std::memcmp(reopened.image() + 640, small_rec.data(), 64), 0);
}

// An interrupted checkpoint leaves records of epoch E + 1 in a log; after recovery the
// program's next E + 1 may log nothing in that thread. The seal of an empty log writes an
// end marker at its start, so the old attempt's records are not read as the new epoch's.
TEST(EpochLog, AnEmptySealHidesAnInterruptedEpochsRecords) {
    region r(region_bytes(small));
    {
        auto log = epoch_log::create(r.p, r.bytes, small);
        const auto a = pattern(64, 14);
        ASSERT_TRUE(log.append(0, 1, 64, a.data(), 64));
        log.seal(0);  // epoch 1 never commits: the crash comes here
    }
    {
        auto log = epoch_log::open(r.p, r.bytes);
        EXPECT_EQ(log.recover().records, 0u);
        log.seal(0);  // the new epoch 1: thread 0 marked nothing
        log.seal(1);
        log.commit(1);
    }
    auto log = epoch_log::open(r.p, r.bytes);
    EXPECT_EQ(log.recover().records, 0u) << "the interrupted attempt's record was replayed";
    for (int i = 64; i < 128; ++i) ASSERT_EQ(log.image()[i], std::byte{0});
}

TEST(EpochLog, AFullLogRefusesTheRecordAndKeepsWhatItHas) {
    region r(region_bytes(small));
    auto log = epoch_log::create(r.p, r.bytes, small);
    const auto a = pattern(384, 7);
    ASSERT_TRUE(log.append(0, 1, 0, a.data(), 384));  // a header line, 6 lines, the end marker: 512
    const auto used = log.log_used(0);
    EXPECT_FALSE(log.append(0, 1, 0, a.data(), 64));
    EXPECT_EQ(log.log_used(0), used);
    EXPECT_THROW(log.append(0, 1, 1000, a.data(), 64), usage_error) << "past the image's end";
    EXPECT_THROW(log.append(2, 1, 0, a.data(), 64), usage_error) << "no third log";
    EXPECT_THROW(log.append(0, 1, 0, a.data(), 0), usage_error) << "empty record";
}

// Damage a committed region in one place; open() or recover() must refuse it with a
// damaged_pool and leave every byte as it was.
template <class Damage>
void expect_refused(Damage&& damage, const char* what) {
    region r(region_bytes(small));
    {
        auto log = epoch_log::create(r.p, r.bytes, small);
        const auto a = pattern(64, 8);
        ASSERT_TRUE(log.append(0, 1, 64, a.data(), 64));
        log.seal(0);
        log.commit(1);
    }
    damage(r.p);
    const auto before = r.copy();
    EXPECT_THROW(epoch_log::open(r.p, r.bytes).recover(), damaged_pool) << what;
    EXPECT_EQ(r.copy(), before) << what << ": a refused recovery wrote something";
}

TEST(EpochLog, DamagedRegionsAreRefusedWritingNothing) {
    constexpr std::uint64_t log0 = 3 * 64;  // thread 0's log; its first record's header
    expect_refused([](std::byte* p) { p[0] = std::byte{0}; }, "magic");
    expect_refused([](std::byte* p) { p[12] = std::byte{9}; }, "threads (checksum)");
    expect_refused([](std::byte* p) { std::uint64_t e = 5; std::memcpy(p + 128, &e, 8); }, "applied past committed");
    expect_refused([](std::byte* p) { p[log0 + 64 + 3] ^= std::byte{1}; }, "record payload (checksum)");
    expect_refused([](std::byte* p) { std::uint64_t d = std::uint64_t{16} << 24; std::memcpy(p + log0 + 16, &d, 8); },
                   "record past the image");
    expect_refused([](std::byte* p) { std::uint64_t d = (std::uint64_t{1} << 24) - 1; std::memcpy(p + log0 + 16, &d, 8); },
                   "record longer than the log");
    expect_refused([](std::byte* p) { std::uint32_t c = 7; std::memcpy(p + log0 + 8, &c, 4); }, "record count");
    // A committed epoch far ahead is not damage in itself (epochs without records need no
    // replay), and recovery does not walk the epochs in between.
    region r2(region_bytes(small));
    {
        auto log = epoch_log::create(r2.p, r2.bytes, small);
        const auto a = pattern(64, 10);
        ASSERT_TRUE(log.append(0, 1, 0, a.data(), 64));
        log.seal(0);
        log.commit(1);
    }
    std::uint64_t far = std::uint64_t{1} << 60;
    std::memcpy(r2.p + 64, &far, 8);
    auto log2 = epoch_log::open(r2.p, r2.bytes);
    EXPECT_EQ(log2.recover().records, 1u);
    EXPECT_EQ(log2.applied_epoch(), far);
    region r(64);
    EXPECT_THROW(epoch_log::open(r.p, 64), damaged_pool) << "smaller than a header";
}

// Never trust the media: any byte of a committed, unreplayed region flipped, recovery either
// refuses it (damaged_pool, nothing written) or completes inside the region (ASan checks the
// accesses): it never reads or writes outside, whatever the damaged word says.
TEST(EpochLog, RandomlyDamagedRegionsAreRefusedUnchangedOrRecovered) {
    std::uint64_t state = 12345;
    const auto next = [&state] {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return state >> 33;
    };
    int refused = 0, recovered = 0;
    for (int round = 0; round < 3000; ++round) {
        region r(region_bytes(small));
        {
            auto log = epoch_log::create(r.p, r.bytes, small);
            const auto a = pattern(128, round);
            ASSERT_TRUE(log.append(0, 1, 64, a.data(), 128));
            ASSERT_TRUE(log.append(0, 1, 512, a.data(), 64));
            ASSERT_TRUE(log.append(1, 1, 256, a.data(), 64));
            log.seal(0);
            log.seal(1);
            log.commit(1);
        }
        const auto at = next() % (3 * 64 + 2 * 512);  // the header lines and the logs
        r.p[at] ^= static_cast<std::byte>(1 + next() % 255);
        const auto before = r.copy();
        try {
            epoch_log::open(r.p, r.bytes).recover();
            ++recovered;
        } catch (const damaged_pool&) {
            ++refused;
            ASSERT_EQ(r.copy(), before) << "byte " << at << ": a refused recovery wrote something";
        }
    }
    EXPECT_GT(refused, 100);
    EXPECT_GT(recovered, 100) << "most bytes of the logs are past their end markers: not read";
}

TEST(EpochLog, PersistenceCostsOfEachStep) {
    region r(region_bytes(small));
    auto log = epoch_log::create(r.p, r.bytes, small);
    const auto a = pattern(128, 9), b = pattern(64, 11);
    auto before = pmem::thread_counters();
    ASSERT_TRUE(log.append(0, 1, 0, a.data(), 128));  // one block: a header line, then 2 + 1 lines
    ASSERT_TRUE(log.append(0, 1, 256, b.data(), 64));
    auto d = pmem::thread_counters() - before;
    EXPECT_EQ(d.pwb_lines, 0u) << "the log is written with NT stores, never written back";
    EXPECT_EQ(d.nt_stores, 3u * 64 / 8) << "the records' lines; the header waits for the block to close";
    EXPECT_EQ(d.pfences, 0u);
    before = pmem::thread_counters();
    log.seal(0);
    d = pmem::thread_counters() - before;
    EXPECT_EQ(d.pwb_lines, 0u);
    EXPECT_EQ(d.nt_stores, 2u * 64 / 8) << "the block's header line and the end marker line";
    EXPECT_EQ(d.pfences, 1u);
    before = pmem::thread_counters();
    log.seal(0);
    d = pmem::thread_counters() - before;
    EXPECT_EQ(d.nt_stores, 0u) << "nothing written since the last seal";
    before = pmem::thread_counters();
    log.commit(1);
    d = pmem::thread_counters() - before;
    EXPECT_EQ(d.pwb_lines, 1u);
    EXPECT_EQ(d.pfences, 1u);
    before = pmem::thread_counters();
    log.replay();
    d = pmem::thread_counters() - before;
    EXPECT_EQ(d.pwb_lines, 1u) << "the applied epoch";
    EXPECT_EQ(d.nt_stores, 3u * 64 / 8) << "the records' three image lines, as NT stores";
    EXPECT_EQ(d.pfences, 2u);
}

// The checkpointer's replay: apply() of the committed epoch's bytes from its own copy, then
// finish_replay(), leaves the same image and state as replay() from the logs.
TEST(EpochLog, ApplyingTheEpochsBytesDirectlyEqualsReplayingTheLogs) {
    region r1(region_bytes(small)), r2(region_bytes(small));
    auto log1 = epoch_log::create(r1.p, r1.bytes, small);
    auto log2 = epoch_log::create(r2.p, r2.bytes, small);
    const auto a = pattern(192, 12), b = pattern(64, 13);
    for (auto* log : {&log1, &log2}) {
        ASSERT_TRUE(log->append(0, 1, 64, a.data(), 192));
        ASSERT_TRUE(log->append(1, 1, 512, b.data(), 64));
        log->seal(0);
        log->seal(1);
        log->commit(1);
    }
    log1.replay();
    log2.apply(512, b.data(), 64);  // any order
    log2.apply(64, a.data(), 192);
    EXPECT_EQ(log2.applied_epoch(), 0u) << "applied only at finish_replay";
    log2.finish_replay();
    EXPECT_EQ(log2.applied_epoch(), 1u);
    EXPECT_EQ(log2.log_used(0), 0u);
    EXPECT_EQ(std::memcmp(log1.image(), log2.image(), small.image_bytes), 0);
    // The logs are reused from their start, as after replay().
    ASSERT_TRUE(log2.append(0, 2, 0, b.data(), 64));
    log2.seal(0);
    log2.commit(2);
    auto reopened = epoch_log::open(r2.p, r2.bytes);
    EXPECT_EQ(reopened.recover().records, 1u);
    EXPECT_EQ(std::memcmp(reopened.image(), b.data(), 64), 0);
}

}  // namespace
}  // namespace ferrite::checkpoint
