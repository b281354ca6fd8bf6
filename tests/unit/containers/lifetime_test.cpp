// Lifetime misuse (issue 16, "guards against misuse"): a pool moved after a catalog and its
// structures were opened keeps working through them (they hold pmem::pool_ref, which shares
// the mapping, not the `pool` object); after pool.close() every structure and the catalog
// throw usage_error naming what was asked instead of touching an unmapped header (the
// catalog's DFC handles too, through dfc_options::in_pool); the heap
// cannot be moved at all (structures keep a pointer to it), which the compiler enforces.
#include <gtest/gtest.h>

#include <type_traits>

#include "catalog_test_support.hpp"
#include "ferrite/containers/deque.hpp"
#include "ferrite/containers/queue.hpp"
#include "ferrite/containers/stack.hpp"
#include "ferrite/error.hpp"

namespace {

using ferrite::usage_error;
using ferrite::alloc::buddy_heap;
using ferrite_test::CatalogTest;

static_assert(!std::is_move_constructible_v<buddy_heap> && !std::is_copy_constructible_v<buddy_heap>,
              "structures keep a pointer to their heap: a movable heap could leave them dangling");

class Lifetime : public CatalogTest {};

TEST_F(Lifetime, AMovedPoolKeepsTheCatalogAndItsStructuresWorking) {
    ferrite::catalog names(*pool_, *heap_);
    auto v = names.open_vector<std::uint64_t>("v");
    ASSERT_TRUE(v->push_back(1));
    ferrite::pmem::pool moved = std::move(*pool_);  // the optional's pool is moved from
    EXPECT_TRUE(v->push_back(2));
    EXPECT_EQ(v->size(), 2u);
    auto again = names.open_vector<std::uint64_t>("w");
    EXPECT_TRUE(again->push_back(3));
    EXPECT_EQ(names.list().size(), 2u);
    heap_.reset();
    moved.close();
}

TEST_F(Lifetime, UseAfterCloseIsAUsageErrorNotACrash) {
    std::uint64_t anchors[3] = {};  // the anchors' persistence does not matter here
    auto st = ferrite::stack<std::uint64_t, buddy_heap>::create(*pool_, *heap_, anchors[0]);
    auto dq = ferrite::deque<std::uint64_t, buddy_heap>::create(*pool_, *heap_, anchors[1]);
    auto qu = ferrite::queue<std::uint64_t, buddy_heap>::create(*pool_, *heap_, anchors[2]);
    ferrite::catalog names(*pool_, *heap_);
    auto v = names.open_vector<double>("v");
    ASSERT_TRUE(v->push_back(1.5));
    ASSERT_TRUE(st.push(1));
    ASSERT_TRUE(dq.push_back(1));
    ASSERT_TRUE(qu.push(1));

    pool_->close();
    auto says_closed = [](auto&& f) {
        try {
            f();
        } catch (const usage_error& e) {
            return std::string(e.what()).find("was closed") != std::string::npos;
        }
        return false;
    };
    EXPECT_TRUE(says_closed([&] { (void)v->push_back(2.5); }));
    EXPECT_TRUE(says_closed([&] { (void)v->size(); }));
    EXPECT_TRUE(says_closed([&] { (void)v->unsynchronized_view(); }));
    EXPECT_TRUE(says_closed([&] { (void)st.push(2); }));
    EXPECT_TRUE(says_closed([&] { (void)st.unsynchronized_view(); }));
    EXPECT_TRUE(says_closed([&] { (void)dq.pop_front(); }));
    EXPECT_TRUE(says_closed([&] { (void)dq.unsynchronized_contents(); }));
    EXPECT_TRUE(says_closed([&] { (void)qu.push(2); }));
    EXPECT_TRUE(says_closed([&] { (void)names.open_vector<double>("v"); }));
    EXPECT_TRUE(says_closed([&] { (void)names.list(); }));
    EXPECT_TRUE(says_closed([&] { names.validate(); }));
}

// The catalog's DFC handles hold their pool too (dfc_options::in_pool): after close, every
// operation, query and recovery refuses, naming the pool, and nothing touches the region.
TEST_F(Lifetime, ADfcHandleKeptPastTheCloseRefusesEveryCall) {
    ferrite::catalog names(*pool_, *heap_);
    auto q = names.open_dfc_queue<std::uint64_t>("q", 2);
    auto s = names.open_dfc_stack<std::uint64_t>("s", 2);
    auto d = names.open_dfc_deque<std::uint64_t>("d", 2);
    ASSERT_TRUE(q->enqueue(0, 7));
    ASSERT_TRUE(s->push(0, 7));
    ASSERT_TRUE(d->push_back(0, 7));
    const unsigned threads = q->threads();

    pool_->close();
    auto says_closed = [](auto&& f) {
        try {
            f();
        } catch (const usage_error& e) {
            const std::string what = e.what();
            return what.find("was closed") != std::string::npos && what.find("dfc_") != std::string::npos;
        }
        return false;
    };
    EXPECT_TRUE(says_closed([&] { (void)q->enqueue(0, 8); }));
    EXPECT_TRUE(says_closed([&] { (void)q->dequeue(1); }));
    EXPECT_TRUE(says_closed([&] { (void)q->unsynchronized_contents(); }));
    EXPECT_TRUE(says_closed([&] { (void)q->recover(0); }));
    EXPECT_TRUE(says_closed([&] { q->recover(); }));
    EXPECT_TRUE(says_closed([&] { (void)q->next_seq(0); }));
    EXPECT_TRUE(says_closed([&] { q->release(0); }));
    EXPECT_TRUE(says_closed([&] { (void)s->pop(0); }));
    EXPECT_TRUE(says_closed([&] { (void)s->unsynchronized_contents(); }));
    EXPECT_TRUE(says_closed([&] { (void)d->pop_front(0); }));
    EXPECT_TRUE(says_closed([&] { (void)d->unsynchronized_check(); }));
    EXPECT_EQ(q->threads(), threads);  // volatile: still answers
}

}  // namespace
