// ferrite::stack (an adapter over the persistent vector core): LIFO semantics against a
// reference model (seeded), empty stack, top, growth, reopening (a stack is stored as a
// vector), and concurrent push/pop under both engines with threads that come and go.
#include "ferrite/containers/stack.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <thread>
#include <unistd.h>

#include "bump_heap.hpp"

namespace ferrite {
namespace {

using ferrite_test::bump_heap;
namespace c = containers;
using u64 = std::uint64_t;

class StackTest : public ::testing::Test {
protected:
    void SetUp() override {
        path_ = "/dev/shm/ferrite-stack-test-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name();
        std::filesystem::remove(path_);
        pool_.emplace(pmem::pool::create(path_, "stack-test", 32 << 20));
        heap_.emplace(*pool_, 16 << 20);
    }
    void TearDown() override {
        pool_.reset();
        std::filesystem::remove(path_);
    }
    template <class Sel = c::use_pfc>
    stack<u64, bump_heap, Sel> make(std::size_t capacity = 2) {
        anchor_ = 0;
        return stack<u64, bump_heap, Sel>::create(*pool_, *heap_, anchor_, capacity);
    }
    std::string path_;
    std::optional<pmem::pool> pool_;
    std::optional<bump_heap> heap_;
    u64 anchor_ = 0;
};

TEST_F(StackTest, BehavesLikeAStackForManySeeds) {
    for (unsigned seed = 1; seed <= 10; ++seed) {
        auto s = make(seed % 4);
        std::vector<u64> model;
        std::mt19937_64 rng(seed);
        for (int i = 0; i < 500; ++i) {
            const auto r = rng() % 5;
            if (r < 2) {
                ASSERT_TRUE(s.push(u64(i)));
                model.push_back(u64(i));
            } else if (r < 4) {
                const auto x = s.pop();
                ASSERT_EQ(x.has_value(), !model.empty());
                if (x) {
                        ASSERT_EQ(*x, model.back());
                        model.pop_back();
                    }
            } else {
                ASSERT_EQ(s.top(), model.empty() ? std::nullopt : std::optional<u64>(model.back()));
                ASSERT_EQ(s.size(), model.size());
            }
        }
        const auto view = s.unsynchronized_view();
        ASSERT_TRUE(std::equal(view.begin(), view.end(), model.begin(), model.end()));
    }
}

TEST_F(StackTest, EmptyStackAndReopen) {
    {
        auto s = make();
        EXPECT_EQ(s.pop(), std::nullopt);
        EXPECT_EQ(s.top(), std::nullopt);
        EXPECT_TRUE(s.empty());
        for (u64 i = 0; i < 100; ++i) s.push(i);  // grows from capacity 2
    }
    auto again = stack<u64, bump_heap>::open(*pool_, *heap_, anchor_);
    EXPECT_EQ(again.size(), 100u);
    EXPECT_EQ(again.top(), 99u);
    EXPECT_EQ(again.pop(), 99u);
    EXPECT_TRUE(heap_->unconfirmed.empty());
    EXPECT_EQ(heap_->confirmed_free, heap_->freed);
    auto as_vector = vector<u64, bump_heap>::open(*pool_, *heap_, anchor_);
    EXPECT_EQ(as_vector.get(0), 0u) << "a stack is stored as a vector";
}

template <class Sel>
void concurrent_exactly_once(stack<u64, bump_heap, Sel>& s, int waves, int threads, int ops) {
    std::vector<std::vector<u64>> popped(static_cast<std::size_t>(waves * threads));
    for (int w = 0; w < waves; ++w) {  // each wave's threads exit before the next starts
        std::vector<std::thread> ts;
        for (int t = 0; t < threads; ++t)
            ts.emplace_back([&, w, t] {
                const int id = w * threads + t;
                for (int i = 0; i < ops; ++i) {
                    ASSERT_TRUE(s.push(u64(id) << 32 | u64(i)));
                    if (i % 4 == 0) continue;
                    auto x = s.pop();
                    ASSERT_TRUE(x.has_value()) << "more pushes than pops so far";
                    popped[static_cast<std::size_t>(id)].push_back(*x);
                }
            });
        for (auto& th : ts) th.join();
    }
    std::vector<u64> all;
    for (auto& p : popped) all.insert(all.end(), p.begin(), p.end());
    while (auto x = s.pop()) all.push_back(*x);
    std::sort(all.begin(), all.end());
    EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "a value popped twice";
    EXPECT_EQ(all.size(), std::size_t(waves * threads * ops)) << "a value lost";
}

TEST_F(StackTest, ConcurrentExactlyOncePfc) {
    auto s = make<c::use_pfc>();
    concurrent_exactly_once(s, 3, 4, 1500);
}

TEST_F(StackTest, ConcurrentExactlyOnceFpfc) {
    auto s = make<c::use_fpfc>();
    concurrent_exactly_once(s, 3, 4, 1500);
}

}  // namespace
}  // namespace ferrite
