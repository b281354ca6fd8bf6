// media_image: snapshots, persistence at fences (newest version wins) and the candidate
// versions a crash image may keep for each line.
#include "ferrite/sim/media_image.hpp"

#include <gtest/gtest.h>

#include <set>

#include "ferrite/sim/rng.hpp"

namespace ferrite::sim {
namespace {

struct region {
    alignas(64) std::array<std::byte, 4 * line_size> bytes{};
    std::byte& at(std::size_t line, std::size_t b = 0) { return bytes[line * line_size + b]; }
};

// Every byte value line `line` takes over many crash images.
std::set<int> outcomes(const media_image& m, std::vector<const line_snapshot*> pending, std::size_t line,
                       std::size_t byte = 0) {
    std::set<int> seen;
    std::vector<std::byte> out;
    for (std::uint64_t s = 0; s < 200; ++s) {
        rng r(s);
        auto p = pending;
        m.crash_image(r, p, out);
        seen.insert(static_cast<int>(out[line * line_size + byte]));
    }
    return seen;
}

TEST(MediaImage, StartsAsCopyAndUnchangedLinesAreKept) {
    region r;
    r.at(1) = std::byte{7};
    media_image m(r.bytes.data(), r.bytes.size());
    EXPECT_EQ(m.lines(), 4u);
    EXPECT_EQ(outcomes(m, {}, 1), (std::set<int>{7}));
}

TEST(MediaImage, UnflushedStoreMayOrMayNotSurvive) {
    region r;
    media_image m(r.bytes.data(), r.bytes.size());
    r.at(2) = std::byte{9};  // stored, never written back: the cache may or may not evict it
    EXPECT_EQ(outcomes(m, {}, 2), (std::set<int>{0, 9}));
}

TEST(MediaImage, PersistedSnapshotIsAlwaysThere) {
    region r;
    media_image m(r.bytes.data(), r.bytes.size());
    r.at(0) = std::byte{5};
    m.persist(m.snapshot(0));
    EXPECT_EQ(outcomes(m, {}, 0), (std::set<int>{5}));
    r.at(0) = std::byte{6};  // a later store, not yet durable
    EXPECT_EQ(outcomes(m, {}, 0), (std::set<int>{5, 6}));
}

TEST(MediaImage, QueuedSnapshotIsACandidateBetweenMediaAndCurrent) {
    region r;
    media_image m(r.bytes.data(), r.bytes.size());
    r.at(3) = std::byte{1};
    auto s = m.snapshot(3);  // pwb'd, not fenced
    r.at(3) = std::byte{2};
    EXPECT_EQ(outcomes(m, {&s}, 3), (std::set<int>{0, 1, 2}));
}

TEST(MediaImage, OlderSnapshotNeverOverwritesNewerMedia) {
    region r;
    media_image m(r.bytes.data(), r.bytes.size());
    r.at(1) = std::byte{1};
    auto older = m.snapshot(1);
    r.at(1) = std::byte{2};
    m.persist(m.snapshot(1));
    m.persist(older);  // another thread's fence, later: must not regress the line
    EXPECT_EQ(outcomes(m, {}, 1), (std::set<int>{2}));
    EXPECT_EQ(outcomes(m, {&older}, 1), (std::set<int>{2})) << "stale snapshots are no candidates";
}

TEST(MediaImage, MaskedSnapshotPersistsOnlyItsBytes) {
    region r;
    media_image m(r.bytes.data(), r.bytes.size());
    r.at(0, 0) = std::byte{1};
    r.at(0, 8) = std::byte{2};
    m.persist(m.snapshot(0, 0xffull << 8));  // an NT store of bytes 8..15
    EXPECT_EQ(outcomes(m, {}, 0, 8), (std::set<int>{2}));
    EXPECT_EQ(outcomes(m, {}, 0, 0), (std::set<int>{0, 1}));
}

TEST(MediaImage, LinesChooseIndependently) {
    region r;
    media_image m(r.bytes.data(), r.bytes.size());
    r.at(0) = std::byte{1};
    r.at(1) = std::byte{1};
    std::set<std::pair<int, int>> seen;
    std::vector<std::byte> out;
    std::vector<const line_snapshot*> none;
    for (std::uint64_t s = 0; s < 200; ++s) {
        rng random(s);
        m.crash_image(random, none, out);
        seen.insert({static_cast<int>(out[0]), static_cast<int>(out[line_size])});
    }
    EXPECT_EQ(seen.size(), 4u) << "all four combinations of two dirty lines must occur";
}

TEST(MediaImage, NothingNewDetectsRedundantWriteBack) {
    region r;
    media_image m(r.bytes.data(), r.bytes.size());
    EXPECT_TRUE(m.nothing_new(0, nullptr));
    r.at(0) = std::byte{1};
    EXPECT_FALSE(m.nothing_new(0, nullptr));
    auto s = m.snapshot(0);
    EXPECT_TRUE(m.nothing_new(0, &s)) << "a second pwb before any store carries nothing new";
}

}  // namespace
}  // namespace ferrite::sim
