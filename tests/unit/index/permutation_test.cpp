// index::permutation: insert_from_back, remove and truncate against a plain array model, and
// the invariant that every slot appears once among the positions.
#include "ferrite/index/permutation.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace {

using ferrite::index::permutation;
constexpr unsigned width = 14;

void expect_matches(const permutation& p, const std::vector<unsigned>& positions, unsigned live) {
    ASSERT_EQ(p.size(), live);
    for (unsigned i = 0; i < width; ++i) ASSERT_EQ(p[i], positions[i]) << "position " << i;
    std::vector<unsigned> sorted(positions.begin(), positions.begin() + width);
    std::sort(sorted.begin(), sorted.end());
    for (unsigned i = 0; i < width; ++i) ASSERT_EQ(sorted[i], i) << "every slot once";
}

TEST(Permutation, EmptyAndIdentity) {
    const permutation e = permutation::empty(width);
    EXPECT_EQ(e.size(), 0u);
    EXPECT_EQ(e.back(), 0u);
    const permutation i = permutation::identity(width, 5);
    EXPECT_EQ(i.size(), 5u);
    for (unsigned p = 0; p < width; ++p) EXPECT_EQ(i[p], p);
    EXPECT_EQ(i.back(), 5u);
}

TEST(Permutation, RandomInsertsAndRemovesMatchAnArray) {
    std::mt19937_64 rng(21);
    for (int round = 0; round < 200; ++round) {
        permutation p = permutation::empty(width);
        std::vector<unsigned> model(width);
        for (unsigned i = 0; i < width; ++i) model[i] = i;
        unsigned live = 0;
        for (int step = 0; step < 100; ++step) {
            const bool insert = live == 0 || (live < width && rng() % 2 == 0);
            if (insert) {
                const unsigned at = static_cast<unsigned>(rng() % (live + 1));
                const unsigned slot = model[live];
                ASSERT_EQ(p.back(), slot);
                model.erase(model.begin() + live);
                model.insert(model.begin() + at, slot);
                ++live;
                p.insert_from_back(at);
            } else if (rng() % 8 == 0) {
                const unsigned keep = static_cast<unsigned>(rng() % (live + 1));
                live = keep;
                p.truncate(keep);
            } else {
                const unsigned at = static_cast<unsigned>(rng() % live);
                const unsigned slot = model[at];
                model.erase(model.begin() + at);
                model.insert(model.begin() + (live - 1), slot);
                --live;
                p.remove(at);
                ASSERT_EQ(p.back(), slot) << "the removed slot is the next one used";
            }
            expect_matches(p, model, live);
        }
    }
}

TEST(Permutation, FullLeafInsertAtEveryPosition) {
    for (unsigned at = 0; at < width; ++at) {
        permutation p = permutation::identity(width, width - 1);
        p.insert_from_back(at);
        EXPECT_EQ(p.size(), width);
        EXPECT_EQ(p[at], width - 1);
    }
}

}  // namespace
