// The durable sets' and maps' per-key history checker (crash/sets/set_history.hpp): what it
// accepts and refuses for sets and for maps with values, its fast walk (a placed prefix plus
// a window) agreeing with the walk over the whole history on random histories, and a window
// overflowed.
#include "sets/set_history.hpp"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

namespace ferrite::crash::sets_check {
namespace {

event done(op_kind k, bool r, std::uint64_t inv, std::uint64_t ret, unsigned tid = 0, std::uint64_t value = 0) {
    event e;
    e.what = {k, 0, value};
    e.returned = true;
    e.got.flag = r;
    e.invoked = inv;
    e.returned_at = ret;
    e.tid = tid;
    return e;
}
event got(std::optional<std::uint64_t> v, std::uint64_t inv, std::uint64_t ret, unsigned tid = 0) {
    event e = done(op_kind::get, false, inv, ret, tid);
    e.got.value = v;
    return e;
}
event pending(op_kind k, std::uint64_t inv, unsigned tid = 0, std::uint64_t value = 0) {
    event e;
    e.what = {k, 0, value};
    e.invoked = inv;
    e.tid = tid;
    return e;
}
bool ok(const std::vector<event>& h, state recovered, state initially = {}) {
    return check_key(0, h, recovered, initially).empty();
}
constexpr state absent{};
constexpr state present{0};  // a set's member

TEST(SetHistory, ReturnedOperationsMustBeReflected) {
    const std::vector<event> h{done(op_kind::insert, true, 1, 2)};
    EXPECT_TRUE(ok(h, present));
    EXPECT_FALSE(ok(h, absent));
    const std::vector<event> h2{done(op_kind::insert, true, 1, 2), done(op_kind::erase, true, 3, 4)};
    EXPECT_TRUE(ok(h2, absent));
    EXPECT_FALSE(ok(h2, present));
}

TEST(SetHistory, APendingOperationMayOrMayNotHaveTakenEffect) {
    const std::vector<event> h{done(op_kind::insert, true, 1, 2), pending(op_kind::erase, 3, 1)};
    EXPECT_TRUE(ok(h, present));
    EXPECT_TRUE(ok(h, absent));
}

TEST(SetHistory, RealTimeOrderAndResponsesAreKept) {
    const auto contains = op_kind::contains;
    const auto insert = op_kind::insert;
    // contains=false returned before the insert began: the insert comes after it.
    EXPECT_TRUE(ok({done(contains, false, 1, 2), done(insert, true, 3, 4)}, present));
    // contains=true returned before the only insert began: nothing explains it.
    EXPECT_FALSE(ok({done(contains, true, 1, 2), done(insert, true, 3, 4)}, present));
    // Overlapping: the contains may go after the insert.
    EXPECT_TRUE(ok({done(contains, true, 1, 4, 1), done(insert, true, 2, 3)}, present));
    // Two successful inserts need an erase between them.
    EXPECT_FALSE(ok({done(insert, true, 1, 2), done(insert, true, 3, 4)}, present));
    // The initial state counts.
    EXPECT_TRUE(ok({done(op_kind::erase, true, 1, 2)}, absent, present));
    EXPECT_FALSE(ok({done(op_kind::erase, true, 1, 2)}, absent));
}

TEST(MapHistory, ValuesMustBeTheLastWritten) {
    const auto ins = [](bool r, std::uint64_t v, std::uint64_t t) { return done(op_kind::insert, r, t, t + 1, 0, v); };
    const auto put = [](bool r, std::uint64_t v, std::uint64_t t) { return done(op_kind::assign, r, t, t + 1, 0, v); };
    EXPECT_TRUE(ok({ins(true, 7, 1)}, state{7}));
    EXPECT_FALSE(ok({ins(true, 7, 1)}, state{8}));
    // A failed insert does not replace the value; an assign does.
    EXPECT_TRUE(ok({ins(true, 7, 1), ins(false, 8, 3)}, state{7}));
    EXPECT_FALSE(ok({ins(true, 7, 1), ins(false, 8, 3)}, state{8}));
    EXPECT_TRUE(ok({ins(true, 7, 1), put(false, 8, 3)}, state{8}));
    EXPECT_FALSE(ok({ins(true, 7, 1), put(false, 8, 3)}, state{7}));
    // assign's response: true iff it inserted.
    EXPECT_FALSE(ok({ins(true, 7, 1), put(true, 8, 3)}, state{8}));
    EXPECT_TRUE(ok({put(true, 8, 1)}, state{8}));
    // get returns the value or none, in real-time order.
    EXPECT_TRUE(ok({ins(true, 7, 1), got(7, 3, 4)}, state{7}));
    EXPECT_FALSE(ok({ins(true, 7, 1), got(8, 3, 4)}, state{7}));
    EXPECT_FALSE(ok({ins(true, 7, 1), got(std::nullopt, 3, 4)}, state{7}));
    EXPECT_TRUE(ok({got(std::nullopt, 1, 2), ins(true, 7, 3)}, state{7}));
    // Overlapping get and assign: either value.
    EXPECT_TRUE(ok({ins(true, 7, 1), done(op_kind::assign, false, 3, 6, 1, 9), got(7, 4, 5)}, state{9}));
    EXPECT_TRUE(ok({ins(true, 7, 1), done(op_kind::assign, false, 3, 6, 1, 9), got(9, 4, 5)}, state{9}));
    // A get of 9 after a get of 7 after the assign returned: refused.
    EXPECT_FALSE(ok({ins(true, 7, 1), put(false, 9, 3), got(7, 5, 6)}, state{9}));
    // A pending assign may have written its value, or not.
    EXPECT_TRUE(ok({ins(true, 7, 1), pending(op_kind::assign, 3, 1, 9)}, state{9}));
    EXPECT_TRUE(ok({ins(true, 7, 1), pending(op_kind::assign, 3, 1, 9)}, state{7}));
    EXPECT_FALSE(ok({ins(true, 7, 1), pending(op_kind::assign, 3, 1, 9)}, state{8}));
}

TEST(MapHistory, CheckHistorySplitsByKey) {
    std::vector<event> h{done(op_kind::insert, true, 1, 2, 0, 5), done(op_kind::insert, true, 3, 4, 1, 6)};
    h[1].what.key = 1;
    EXPECT_TRUE(check_history(h, {{0, 5}, {1, 6}}, 2).empty());
    EXPECT_FALSE(check_history(h, {{0, 5}}, 2).empty());
    EXPECT_FALSE(check_history(h, {{0, 6}, {1, 5}}, 2).empty());
    EXPECT_FALSE(check_history(h, {{0, 5}, {1, 6}, {2, 0}}, 2).empty());  // outside the range
}

// A random history from a sequential run of a map with overlapping intervals, sometimes one
// operation held up across many others (more than the window), a few wrong responses, and
// a random outcome. The value range is small so that different writes collide.
TEST(SetHistory, TheWindowedWalkAgreesWithTheWholeHistoryWalk) {
    std::mt19937_64 rng(5);
    int explained = 0, refused = 0;
    for (int round = 0; round < 600; ++round) {
        const bool map = round % 2 == 1;
        const int n = 5 + static_cast<int>(rng() % (round % 4 < 2 ? 250 : 20));
        std::vector<event> h;
        state s = rng() % 2 ? state{map ? rng() % 3 : 0} : state{};
        const state initially = s;
        std::uint64_t clock = 0;
        for (int i = 0; i < n; ++i) {
            const auto kind = static_cast<op_kind>(rng() % (map ? 5 : 3));
            const op o{kind, 0, map ? rng() % 3 : 0};
            response r = apply_op(s, o);
            if (rng() % 40 == 0) {  // sometimes a wrong response
                r.flag = !r.flag;
                r.value = r.value ? std::optional<std::uint64_t>{} : std::optional<std::uint64_t>{1};
            }
            const std::uint64_t inv = clock + 1 + rng() % 2, ret = inv + 1 + rng() % (i % 37 == 3 ? 400 : 3);
            clock = inv;
            event e = i == n - 1 && rng() % 2 ? pending(kind, inv, i % 3, o.value) : done(kind, r.flag, inv, ret, i % 3, o.value);
            if (e.returned) e.got = r;
            h.push_back(e);
        }
        const state recovered = rng() % 4 != 0 ? s : s ? state{} : state{map ? rng() % 3 : 0};
        bool overflow = false;
        const bool fast = explained_windowed(h, initially, recovered, overflow);
        const bool whole = explained_general(h, initially, recovered);
        if (!overflow) {
            EXPECT_EQ(fast, whole) << "round " << round;
        } else {
            EXPECT_TRUE(!fast || whole) << "round " << round;
        }
        EXPECT_EQ(check_key(0, h, recovered, initially).empty(), whole) << "round " << round;
        (whole ? explained : refused)++;
    }
    EXPECT_GT(explained, 30);
    EXPECT_GT(refused, 30);
}

// A contains held up across 100 operations that can only take effect after all of them
// (random moments make such histories): more than the window, still explained.
TEST(SetHistory, AnOperationHeldUpAcrossMoreThanTheWindowIsChecked) {
    std::vector<event> h{done(op_kind::contains, true, 1, 1000, 1)};
    for (std::uint64_t i = 0; i < 100; ++i) h.push_back(done(op_kind::contains, false, 2 + 2 * i, 3 + 2 * i));
    h.push_back(done(op_kind::insert, true, 300, 301));
    bool overflow = false;
    EXPECT_FALSE(explained_windowed(h, absent, present, overflow));
    EXPECT_TRUE(overflow);
    EXPECT_TRUE(ok(h, present));
    EXPECT_FALSE(ok(h, absent));
}

// A map history of 300 operations of 4 threads (a real-time order, more than the old 64-op
// bound of a bit-mask walk) is checked quickly and its tampered outcome refused.
TEST(MapHistory, LongHistoriesAreChecked) {
    std::mt19937_64 rng(11);
    std::vector<event> h;
    state s;
    std::uint64_t clock = 0;
    for (int i = 0; i < 300; ++i) {
        const op o{static_cast<op_kind>(rng() % 5), 0, rng() % 4};
        const response r = apply_op(s, o);
        event e = done(o.kind, r.flag, clock + 1, clock + 8, static_cast<unsigned>(i % 4), o.value);  // overlapping
        e.got = r;
        clock += 2;
        h.push_back(e);
    }
    EXPECT_TRUE(ok(h, s));
    EXPECT_FALSE(ok(h, s ? state{} : state{9}));
}

}  // namespace
}  // namespace ferrite::crash::sets_check
