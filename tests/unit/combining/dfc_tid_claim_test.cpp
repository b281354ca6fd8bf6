// One thread per DFC thread id at a time (ferrite/combining/dfc_tid_claims.hpp): a thread's
// first operation claims the id; another live thread using it gets usage_error and changes
// nothing; the claim ends when the thread exits or calls release(tid); claims belong to one
// engine and never outlive it.
#include "ferrite/combining/dfc_tid_claims.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <latch>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../containers/dfc_test_support.hpp"
#include "ferrite/containers/dfc_stack.hpp"
#include "ferrite/sync/thread_id.hpp"

namespace ferrite {
namespace {

using ferrite_test::dfc_region_buffer;
using stack = dfc_stack<std::uint64_t>;
using u64 = std::uint64_t;

std::vector<std::byte> bytes_of(dfc_region_buffer& r) {
    const auto* b = static_cast<const std::byte*>(r.data());
    return {b, b + r.size()};
}

// What `f` throws, if it is a usage_error (empty optional: it threw nothing).
template <class F>
std::optional<std::string> usage_error_of(F&& f) {
    try {
        f();
    } catch (const usage_error& e) {
        return std::string(e.what());
    }
    return std::nullopt;
}

class DfcTidClaim : public ::testing::Test {
protected:
    dfc_region_buffer region{stack::required_bytes(3, 64)};
    stack s = stack::create(region.data(), region.size(), 3);
};

TEST(ThreadToken, NonzeroStableAndNeverShared) {
    const u64 mine = sync::this_thread_token();
    EXPECT_NE(mine, 0u);
    EXPECT_EQ(sync::this_thread_token(), mine);
    u64 first = 0, second = 0;
    std::thread([&] { first = sync::this_thread_token(); }).join();
    std::thread([&] { second = sync::this_thread_token(); }).join();
    EXPECT_NE(first, mine);
    EXPECT_NE(second, first) << "a token is never reused, even after its thread exits";
}

TEST_F(DfcTidClaim, SecondThreadOnAHeldIdGetsUsageErrorAndChangesNothing) {
    ASSERT_TRUE(s.push(0, 1));
    EXPECT_EQ(s.engine().holder(0), sync::this_thread_token());
    const auto before = bytes_of(region);
    std::optional<std::string> push_error, pop_error;
    std::thread([&] {
        push_error = usage_error_of([&] { (void)s.push(0, 2); });
        pop_error = usage_error_of([&] { (void)s.pop(0); });
    }).join();
    ASSERT_TRUE(push_error && pop_error) << "another thread used thread id 0 while its holder lives";
    EXPECT_NE(push_error->find("dfc_stack: thread id 0 is in use by another thread"), std::string::npos) << *push_error;
    EXPECT_NE(push_error->find("release(0)"), std::string::npos) << *push_error;
    EXPECT_TRUE(before == bytes_of(region)) << "the refused operation wrote to the region";
    EXPECT_EQ(s.unsynchronized_contents(), std::vector<u64>{1});
    EXPECT_EQ(s.next_seq(0), 2u);
    EXPECT_EQ(s.engine().holder(0), sync::this_thread_token()) << "the refusal did not take the id away";
    EXPECT_TRUE(s.push(0, 3)) << "the holder goes on";
}

TEST_F(DfcTidClaim, OneThreadMayHoldSeveralIds) {
    for (unsigned t = 0; t < 3; ++t) ASSERT_TRUE(s.push(t, t));
    for (unsigned t = 0; t < 3; ++t) EXPECT_EQ(s.engine().holder(t), sync::this_thread_token());
}

TEST_F(DfcTidClaim, AnIdIsFreeAgainWhenItsThreadExits) {
    u64 token = 0;
    std::thread([&] {
        ASSERT_TRUE(s.push(1, 10));
        token = sync::this_thread_token();
        EXPECT_EQ(s.engine().holder(1), token);
    }).join();
    EXPECT_EQ(s.engine().holder(1), 0u) << "the thread's exit released its claim";
    ASSERT_TRUE(s.push(1, 11)) << "another thread may take the id now";
    EXPECT_EQ(s.engine().holder(1), sync::this_thread_token());
    EXPECT_EQ(s.unsynchronized_contents(), (std::vector<u64>{11, 10}));
    EXPECT_EQ(s.recover(1).seq, 2u) << "the new holder continues the id's seq";
}

TEST_F(DfcTidClaim, ReleaseHandsTheIdToAnotherThread) {
    ASSERT_TRUE(s.push(0, 1));
    s.release(0);
    EXPECT_EQ(s.engine().holder(0), 0u);
    std::latch taken(1), done(1);
    std::thread other([&] {
        EXPECT_TRUE(s.push(0, 2));
        taken.count_down();
        done.wait();
    });
    taken.wait();
    EXPECT_TRUE(usage_error_of([&] { (void)s.push(0, 3); })) << "the other thread holds it now";
    const auto message = usage_error_of([&] { s.release(0); });
    ASSERT_TRUE(message) << "released an id another live thread holds";
    EXPECT_NE(message->find("held by another thread"), std::string::npos) << *message;
    done.count_down();
    other.join();
    EXPECT_TRUE(s.push(0, 4));
    EXPECT_EQ(s.unsynchronized_contents(), (std::vector<u64>{4, 2, 1}));
}

TEST_F(DfcTidClaim, ReleaseOfAFreeIdDoesNothingAndOfAnIdBeyondTheRangeThrows) {
    EXPECT_NO_THROW(s.release(2));
    EXPECT_NO_THROW(s.release(2));
    EXPECT_THROW(s.release(3), usage_error);
    ASSERT_TRUE(s.push(2, 5));
    s.release(2);
    s.release(2);  // released twice: the second finds it free
    EXPECT_EQ(s.engine().holder(2), 0u);
}

TEST_F(DfcTidClaim, ClaimsBelongToOneEngine) {
    // A thread holding id 0 of an engine that is gone: a structure opened again starts free,
    // and the thread's exit, after the engine is destroyed, touches nothing (ASan).
    std::latch claimed(1), reopened(1);
    std::thread holder([&] {
        EXPECT_TRUE(s.push(0, 1));
        claimed.count_down();
        reopened.wait();
    });
    claimed.wait();
    {
        auto again = stack::open(region.data(), region.size());
        EXPECT_EQ(again.engine().holder(0), 0u) << "a reopened structure starts with every id free";
        EXPECT_TRUE(again.push(0, 2));
    }
    s = stack::open(region.data(), region.size());  // the holder's engine is destroyed
    reopened.count_down();
    holder.join();
    EXPECT_EQ(s.engine().holder(0), 0u);
    EXPECT_EQ(s.unsynchronized_contents(), (std::vector<u64>{2, 1}));
}

TEST_F(DfcTidClaim, ManyThreadsComeAndGoOnOneId) {
    // Each thread takes id 1 after the previous one exited; the exit lists of dead engines
    // do not pile up in a long-lived thread either (this one claims on 200 engines).
    for (int i = 0; i < 50; ++i) std::thread([&, i] { ASSERT_TRUE(s.push(1, static_cast<u64>(i))); }).join();
    EXPECT_EQ(s.unsynchronized_contents().size(), 50u);
    EXPECT_EQ(s.recover(1).seq, 50u);
    for (int i = 0; i < 200; ++i) {
        dfc_region_buffer r(stack::required_bytes(1, 4));
        auto t = stack::create(r.data(), r.size(), 1);
        ASSERT_TRUE(t.push(0, 1));
    }
}

// dfc_options::tid_claims = false (the benchmarks' no-tid-claims ablation): nothing is
// claimed, so another thread's operation on a used id goes ahead (the caller's promise).
TEST(DfcTidClaimsOff, NothingIsClaimedOrRefused) {
    dfc_region_buffer r(stack::required_bytes(1, 64));
    combining::dfc_options o;
    o.tid_claims = false;
    auto s = stack::create(r.data(), r.size(), 1, o);
    ASSERT_TRUE(s.push(0, 1));
    EXPECT_EQ(s.engine().holder(0), 0u);
    std::thread([&] { EXPECT_TRUE(s.push(0, 2)); }).join();  // one at a time: the promise kept
    EXPECT_NO_THROW(s.release(0));
    EXPECT_EQ(s.pop(0), 2u);
}

}  // namespace
}  // namespace ferrite
