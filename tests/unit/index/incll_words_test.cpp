// index::incll_words: the value undo word's encoding and the permutation checks recovery
// makes of words read from the media.
#include "ferrite/index/incll_words.hpp"

#include <gtest/gtest.h>

#include "ferrite/index/nodes.hpp"

namespace {

namespace w = ferrite::index::incll_words;
using ferrite::index::permutation;

TEST(IncllWords, ZeroIsEmpty) { EXPECT_FALSE(w::decode(0).has_value()); }

TEST(IncllWords, EncodeDecodeRoundTrip) {
    for (unsigned index = 0; index < 7; ++index)
        for (std::uint64_t epoch : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{65535}, std::uint64_t{65536 + 17}}) {
            for (std::uint64_t old : {std::uint64_t{0}, std::uint64_t{42}, w::max_logged_value}) {
                const auto u = w::decode(w::encode(index, old, epoch));
                ASSERT_TRUE(u.has_value());
                EXPECT_EQ(u->index, index);
                EXPECT_EQ(u->old_value, old);
                EXPECT_TRUE(w::same_epoch(u->low_epoch, epoch));
                EXPECT_FALSE(w::same_epoch(u->low_epoch, epoch + 1));
            }
        }
}

TEST(IncllWords, LowEpochBitsAliasEvery65536Epochs) {
    // What the scrub at each wrap exists for: the word alone cannot tell these apart.
    const auto u = w::decode(w::encode(3, 5, 10));
    EXPECT_TRUE(w::same_epoch(u->low_epoch, 10 + 65536));
}

TEST(IncllWords, LiveSlots) {
    permutation p = permutation::empty(14);
    EXPECT_FALSE(w::is_live(p, 0));
    p.insert_from_back(0);  // slot 0 live
    p.insert_from_back(0);  // slot 1 live, before it
    EXPECT_TRUE(w::is_live(p, 0));
    EXPECT_TRUE(w::is_live(p, 1));
    EXPECT_FALSE(w::is_live(p, 2));
    p.remove(1);  // slot 0 freed
    EXPECT_FALSE(w::is_live(p, 0));
    EXPECT_TRUE(w::is_live(p, 1));
}

TEST(IncllWords, ValidPermutations) {
    permutation p = permutation::empty(14);
    EXPECT_TRUE(w::valid_permutation(p.value(), 14));
    for (unsigned i = 0; i < 14; ++i) p.insert_from_back(i / 2);
    EXPECT_TRUE(w::valid_permutation(p.value(), 14));
    p.remove(5);
    EXPECT_TRUE(w::valid_permutation(p.value(), 14));
    EXPECT_FALSE(w::valid_permutation(p.value() | 15, 14));             // count 15 > width
    EXPECT_FALSE(w::valid_permutation(p.value() ^ (std::uint64_t{1} << 4), 14));  // a slot twice
    EXPECT_FALSE(w::valid_permutation(0, 14));                           // every position slot 0
    EXPECT_FALSE(w::valid_permutation(~std::uint64_t{0}, 14));
}

}  // namespace
