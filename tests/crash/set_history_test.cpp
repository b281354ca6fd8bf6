// The durable sets' per-key history checker (crash/sets/set_history.hpp): what it accepts and
// refuses, and its fast walk (a placed prefix plus a window) agreeing with the walk over the
// whole history on random histories, and a window overflowed.
#include "sets/set_history.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace ferrite::crash::sets_check {
namespace {

key_op done(set_op op, bool r, std::uint64_t inv, std::uint64_t ret, unsigned tid = 0) {
    return {op, true, r, inv, ret, tid, 0};
}
key_op pending(set_op op, std::uint64_t inv, unsigned tid = 0) { return {op, false, false, inv, never, tid, 0}; }

TEST(SetHistory, ReturnedOperationsMustBeReflected) {
    const std::vector<key_op> h{done(set_op::insert, true, 1, 2)};
    EXPECT_TRUE(check_key(h, false, true).empty());
    EXPECT_FALSE(check_key(h, false, false).empty());
    const std::vector<key_op> h2{done(set_op::insert, true, 1, 2), done(set_op::erase, true, 3, 4)};
    EXPECT_TRUE(check_key(h2, false, false).empty());
    EXPECT_FALSE(check_key(h2, false, true).empty());
}

TEST(SetHistory, APendingOperationMayOrMayNotHaveTakenEffect) {
    const std::vector<key_op> h{done(set_op::insert, true, 1, 2), pending(set_op::erase, 3, 1)};
    EXPECT_TRUE(check_key(h, false, true).empty());
    EXPECT_TRUE(check_key(h, false, false).empty());
}

TEST(SetHistory, RealTimeOrderAndResponsesAreKept) {
    // contains=false returned before the insert began: the insert comes after it.
    const auto contains = set_op::contains;
    const auto insert = set_op::insert;
    EXPECT_TRUE(check_key({done(contains, false, 1, 2), done(insert, true, 3, 4)}, false, true).empty());
    // contains=true returned before the only insert began: nothing explains it.
    EXPECT_FALSE(check_key({done(contains, true, 1, 2), done(insert, true, 3, 4)}, false, true).empty());
    // Overlapping: the contains may go after the insert.
    EXPECT_TRUE(check_key({done(contains, true, 1, 4, 1), done(insert, true, 2, 3)}, false, true).empty());
    // Two successful inserts need an erase between them.
    EXPECT_FALSE(check_key({done(set_op::insert, true, 1, 2), done(set_op::insert, true, 3, 4)}, false, true).empty());
}

// A random history from a sequential run of a set with overlapping intervals, sometimes one
// operation held up across many others (more than the window), and a random outcome.
TEST(SetHistory, TheWindowedWalkAgreesWithTheWholeHistoryWalk) {
    std::mt19937_64 rng(5);
    int explained = 0, refused = 0;
    for (int round = 0; round < 400; ++round) {
        const int n = 5 + static_cast<int>(rng() % (round % 4 == 0 ? 250 : 20));
        std::vector<key_op> h;
        bool present = rng() % 2;
        const bool initially = present;
        std::uint64_t clock = 0;
        for (int i = 0; i < n; ++i) {
            const auto op = static_cast<set_op>(rng() % 3);
            bool r = false;
            switch (op) {
                case set_op::insert: r = !present; present = true; break;
                case set_op::erase: r = present; present = false; break;
                case set_op::contains: r = present; break;
            }
            if (rng() % 40 == 0) r = !r;  // sometimes a wrong response
            const std::uint64_t inv = clock + 1 + rng() % 2, ret = inv + 1 + rng() % (i % 37 == 3 ? 400 : 3);
            clock = inv;
            h.push_back(i == n - 1 && rng() % 2 ? pending(op, inv, i % 3) : done(op, r, inv, ret, i % 3));
        }
        const bool recovered = rng() % 4 == 0 ? !present : present;
        bool overflow = false;
        const bool fast = explained_windowed(h, initially, recovered, overflow);
        const bool whole = explained_general(h, initially, recovered);
        if (!overflow) {
            EXPECT_EQ(fast, whole) << "round " << round;
        } else {
            EXPECT_TRUE(!fast || whole) << "round " << round;
        }
        EXPECT_EQ(check_key(h, initially, recovered).empty(), whole) << "round " << round;
        (whole ? explained : refused)++;
    }
    EXPECT_GT(explained, 20);
    EXPECT_GT(refused, 20);
}

// A contains held up across 100 operations that can only take effect after all of them
// (random moments make such histories): more than the window, still explained.
TEST(SetHistory, AnOperationHeldUpAcrossMoreThanTheWindowIsChecked) {
    std::vector<key_op> h{done(set_op::contains, true, 1, 1000, 1)};
    for (std::uint64_t i = 0; i < 100; ++i) h.push_back(done(set_op::contains, false, 2 + 2 * i, 3 + 2 * i));
    h.push_back(done(set_op::insert, true, 300, 301));
    bool overflow = false;
    EXPECT_FALSE(explained_windowed(h, false, true, overflow));
    EXPECT_TRUE(overflow);
    EXPECT_TRUE(check_key(h, false, true).empty());
    EXPECT_FALSE(check_key(h, false, false).empty());
}

}  // namespace
}  // namespace ferrite::crash::sets_check
