// ferrite::catalog with DFC structures: named dfc_stack / dfc_queue / dfc_deque created on
// first use, found again after a restart with their contents, their node pools grown into
// the pool's heap, each thread's latest operation detectable after reopening, and wrong
// kinds or element types refused without changes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "catalog_test_support.hpp"

namespace ferrite {
namespace {

using ferrite_test::CatalogTest;

TEST_F(CatalogTest, NamedDfcStructuresPersistAndGrowIntoTheHeap) {
    {
        catalog names(*pool_, *heap_);
        auto s = names.open_dfc_stack<std::uint64_t>("undo", 2, /*initial_nodes*/ 8);
        auto q = names.open_dfc_queue<std::uint32_t>("jobs", 2, 8);
        auto d = names.open_dfc_deque<std::int64_t>("window", 2, 8);
        for (std::uint64_t i = 0; i < 500; ++i) {
            ASSERT_TRUE(s->push(i % 2, i));
            ASSERT_TRUE(q->enqueue(i % 2, static_cast<std::uint32_t>(i)));
            ASSERT_TRUE(i % 2 ? d->push_front(1, -std::int64_t(i)) : d->push_back(0, std::int64_t(i)));
        }
        EXPECT_GT(s->engine().node_chunks(), 1u) << "500 elements in 8 nodes: the pool grew";
        EXPECT_EQ(names.open_dfc_stack<std::uint64_t>("undo", 2), s) << "one object per name";
    }
    reopen();
    catalog names(*pool_, *heap_);
    auto s = names.open_dfc_stack<std::uint64_t>("undo", 2);
    auto q = names.open_dfc_queue<std::uint32_t>("jobs", 2);
    auto d = names.open_dfc_deque<std::int64_t>("window", 2);
    EXPECT_EQ(s->pop(0), 499u);
    EXPECT_EQ(q->dequeue(1), 0u);
    EXPECT_EQ(d->pop_front(0), -499);
    EXPECT_EQ(d->pop_back(1), 498);
    EXPECT_EQ(s->recover(0).response.value, 499u) << "detectability survives the catalog";
    const auto objects = names.list();
    ASSERT_EQ(objects.size(), 3u);
    EXPECT_EQ(objects[0].kind, "dfc_stack");
    EXPECT_EQ(objects[1].kind, "dfc_queue");
    EXPECT_EQ(objects[2].kind, "dfc_deque");
    EXPECT_EQ(objects[1].element_size, 4u);
    EXPECT_TRUE(heap_->check().empty());
}

// The crash cases (an interrupted creation, growth or operation of a named DFC structure)
// are the `catalog` crash target's; here: what each thread learns after a clean restart.
TEST_F(CatalogTest, EveryThreadLearnsItsLatestDfcOperationAfterRecoverPool) {
    {
        catalog names(*pool_, *heap_);
        auto s = names.open_dfc_stack<std::uint64_t>("s", 2, 4);
        ASSERT_TRUE(s->push(0, 7));
        ASSERT_TRUE(s->push(1, 8));
        ASSERT_EQ(s->pop(1), 8u);
    }
    reopen();
    catalog names(*pool_, *heap_);
    auto s = names.open_dfc_stack<std::uint64_t>("s", 2);
    const auto r0 = s->recover(0), r1 = s->recover(1);
    EXPECT_EQ(r0.seq, 1u);
    EXPECT_TRUE(r0.took_effect);
    EXPECT_EQ(r0.response.status, combining::dfc_status::ack);
    EXPECT_EQ(r1.seq, 2u);
    EXPECT_EQ(r1.response.status, combining::dfc_status::value);
    EXPECT_EQ(r1.response.value, 8u);
    EXPECT_EQ(s->unsynchronized_contents(), std::vector<std::uint64_t>{7});
}

TEST_F(CatalogTest, DfcWrongKindOrElementTypeIsRefusedAndChangesNothing) {
    catalog names(*pool_, *heap_);
    auto s = names.open_dfc_stack<std::uint64_t>("s", 2, 4);
    ASSERT_TRUE(s->push(0, 1));
    // While the stack is open in this process, the live-object check answers first.
    EXPECT_THROW(names.open_dfc_queue<std::uint64_t>("s", 2), usage_error);
    s.reset();
    // Then the directory's: the name holds a dfc_stack of 8-byte elements.
    EXPECT_THROW(names.open_dfc_queue<std::uint64_t>("s", 2), ferrite::error) << "a stack is no queue";
    EXPECT_THROW(names.open_dfc_stack<std::uint32_t>("s", 2), ferrite::error) << "another element type";
    EXPECT_THROW(names.open_vector<std::uint64_t>("s"), ferrite::error);
    EXPECT_THROW(names.open_dfc_stack<std::uint64_t>("t", 0), usage_error) << "no thread ids";
    s = names.open_dfc_stack<std::uint64_t>("s", 2);
    EXPECT_EQ(s->unsynchronized_contents(), std::vector<std::uint64_t>{1});
    EXPECT_EQ(names.list().size(), 1u) << "a refused open adds no name";
}

TEST_F(CatalogTest, DfcAskingForMoreThreadIdsThanCreatedIsRefusedAndChangesNothing) {
    catalog names(*pool_, *heap_);
    auto q = names.open_dfc_queue<std::uint64_t>("q", 2, 4);
    ASSERT_TRUE(q->enqueue(1, 7));
    EXPECT_THROW(names.open_dfc_queue<std::uint64_t>("q", 3), usage_error) << "while it is open";
    q.reset();
    const std::vector<std::byte> before(pool_->base(), pool_->base() + pool_->size());
    try {
        (void)names.open_dfc_queue<std::uint64_t>("q", 3);
        ADD_FAILURE() << "asking for 3 thread ids of a 2-thread queue was accepted";
    } catch (const usage_error& e) {
        EXPECT_NE(std::string(e.what()).find("created for 2 thread ids"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(std::equal(before.begin(), before.end(), pool_->base())) << "a refused open changed the pool";
    q = names.open_dfc_queue<std::uint64_t>("q", 1);  // fewer is fine
    EXPECT_EQ(q->threads(), 2u);
    EXPECT_EQ(q->dequeue(0), std::optional<std::uint64_t>{7});
}

TEST_F(CatalogTest, ThreadsShareOneNamedDfcQueue) {
    catalog names(*pool_, *heap_);
    constexpr unsigned threads = 4;
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t)
        ts.emplace_back([&, t] {
            auto q = names.open_dfc_queue<std::uint64_t>("shared", threads, 16);
            for (std::uint64_t i = 0; i < 200; ++i) ASSERT_TRUE(q->enqueue(t, t * 1000 + i));
        });
    for (auto& t : ts) t.join();
    auto q = names.open_dfc_queue<std::uint64_t>("shared", threads);
    EXPECT_EQ(q->unsynchronized_contents().size(), threads * 200u);
}

}  // namespace
}  // namespace ferrite
