// session: the persistence model as seen through the real primitives (pwb, pfence, NT
// stores) of bound threads, events and the at_event hook, per-site findings, mutation.
#include "ferrite/sim/session.hpp"

#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "ferrite/pmem/primitives.hpp"

namespace ferrite::sim {
namespace {

struct alignas(64) line_t {
    std::uint64_t word[8];
};

class SessionTest : public ::testing::Test {
protected:
    std::array<line_t, 4> mem{};
    site_registry sites;

    std::byte* base() { return reinterpret_cast<std::byte*>(mem.data()); }
    // Every value word 0 of line `l` takes over many crash images.
    std::set<std::uint64_t> outcomes(session& s, std::size_t l) {
        std::set<std::uint64_t> seen;
        std::vector<std::byte> out;
        for (std::uint64_t seed = 0; seed < 100; ++seed) {
            s.crash_image(seed, out);
            std::uint64_t v;
            std::memcpy(&v, out.data() + l * 64, 8);
            seen.insert(v);
        }
        return seen;
    }
};

TEST_F(SessionTest, WriteBackThenFenceIsDurable) {
    session s(base(), sizeof mem, 1, sites, {});
    session::binding bind(&s, 0);
    mem[0].word[0] = 1;
    pmem::pwb(&mem[0]);
    EXPECT_EQ(outcomes(s, 0), (std::set<std::uint64_t>{0, 1})) << "written back, not fenced";
    pmem::pfence();
    EXPECT_EQ(outcomes(s, 0), (std::set<std::uint64_t>{1}));
}

TEST_F(SessionTest, FenceWithoutWriteBackPersistsNothing) {
    session s(base(), sizeof mem, 1, sites, {});
    session::binding bind(&s, 0);
    mem[1].word[0] = 3;
    pmem::pfence();
    EXPECT_EQ(outcomes(s, 1), (std::set<std::uint64_t>{0, 3}));
}

TEST_F(SessionTest, AnotherThreadsFenceDoesNotPersistMyWriteBack) {
    session s(base(), sizeof mem, 2, sites, {});
    {
        session::binding bind(&s, 0);
        mem[2].word[0] = 4;
        pmem::pwb(&mem[2]);
    }
    std::thread([&] {
        session::binding bind(&s, 1);
        pmem::pfence();
    }).join();
    EXPECT_EQ(outcomes(s, 2), (std::set<std::uint64_t>{0, 4}));
    session::binding bind(&s, 0);
    pmem::pfence();
    EXPECT_EQ(outcomes(s, 2), (std::set<std::uint64_t>{4}));
}

TEST_F(SessionTest, NonTemporalStoreIsDurableAfterFence) {
    session s(base(), sizeof mem, 1, sites, {});
    session::binding bind(&s, 0);
    pmem::nt_store(&mem[3].word[1], 9);
    EXPECT_EQ(mem[3].word[1], 9u) << "the store itself happens at once";
    pmem::pfence();
    std::vector<std::byte> out;
    s.crash_image(1, out);
    std::uint64_t v;
    std::memcpy(&v, out.data() + 3 * 64 + 8, 8);
    EXPECT_EQ(v, 9u);
}

TEST_F(SessionTest, UnboundThreadsAndForeignAddressesHaveNoEffect) {
    session s(base(), sizeof mem, 1, sites, {});
    mem[0].word[0] = 1;
    pmem::pwb(&mem[0]);  // this thread is not bound
    pmem::pfence();
    EXPECT_EQ(s.events(), 0u);
    EXPECT_EQ(outcomes(s, 0), (std::set<std::uint64_t>{0, 1}));
    session::binding bind(&s, 0);
    line_t elsewhere{};
    pmem::pwb(&elsewhere);
    pmem::pfence();
    EXPECT_EQ(s.events(), 2u);
    EXPECT_EQ(outcomes(s, 0), (std::set<std::uint64_t>{0, 1}));
}

TEST_F(SessionTest, AtEventRunsBeforeTheEventTakesEffect) {
    std::vector<std::set<std::uint64_t>> at_events;
    session* self = nullptr;
    session::options opts;
    opts.at_event = [&](std::uint64_t) {
        session::binding unbound(nullptr, 0);
        at_events.push_back(outcomes(*self, 0));
    };
    session s(base(), sizeof mem, 1, sites, std::move(opts));
    self = &s;
    session::binding bind(&s, 0);
    mem[0].word[0] = 1;
    pmem::pwb(&mem[0]);  // event 1
    pmem::pfence();      // event 2: before it, still undecided
    pmem::pfence();      // event 3: before it, durable
    ASSERT_EQ(at_events.size(), 3u);
    EXPECT_EQ(at_events[1], (std::set<std::uint64_t>{0, 1}));
    EXPECT_EQ(at_events[2], (std::set<std::uint64_t>{1}));
    EXPECT_EQ(s.events(), 3u);
}

TEST_F(SessionTest, DisabledWriteBackSiteIsAsIfAbsent) {
    session s(base(), sizeof mem, 1, sites, {});
    session::binding bind(&s, 0);
    mem[0].word[0] = 1;
    const auto where = pmem::site::current();
    sites.disable(site_registry::id_of(where));
    pmem::pwb(&mem[0], where);
    pmem::pfence();
    EXPECT_EQ(outcomes(s, 0), (std::set<std::uint64_t>{0, 1}));
}

TEST_F(SessionTest, DisabledFenceLeavesWriteBacksQueued) {
    session s(base(), sizeof mem, 1, sites, {});
    session::binding bind(&s, 0);
    mem[0].word[0] = 1;
    pmem::pwb(&mem[0]);
    const auto where = pmem::site::current();
    sites.disable(site_registry::id_of(where));
    pmem::pfence(where);
    EXPECT_EQ(outcomes(s, 0), (std::set<std::uint64_t>{0, 1}));
    pmem::pfence();  // an enabled fence later persists them
    EXPECT_EQ(outcomes(s, 0), (std::set<std::uint64_t>{1}));
}

TEST_F(SessionTest, ReportsDoubleFlushesAndEmptyFences) {
    session s(base(), sizeof mem, 1, sites, {});
    session::binding bind(&s, 0);
    mem[0].word[0] = 1;
    for (int i = 0; i < 2; ++i) pmem::pwb(&mem[0]);  // the second carries nothing new
    pmem::pfence();
    pmem::pwb(&mem[0]);  // clean line: nothing new either
    pmem::pfence();
    pmem::pfence();  // nothing queued
    std::uint64_t flushes = 0, redundant = 0, empty = 0;
    for (const auto& r : sites.report()) {
        if (r.kind == site_kind::pwb) flushes += r.calls, redundant += r.redundant_flushes;
        if (r.kind == site_kind::pfence) empty += r.empty_fences;
    }
    EXPECT_EQ(flushes, 3u);
    EXPECT_EQ(redundant, 2u);
    EXPECT_EQ(empty, 1u);
}

TEST_F(SessionTest, BindingsNestAndRestore) {
    session a(base(), 2 * 64, 1, sites, {});
    session b(base() + 128, 2 * 64, 1, sites, {});
    session::binding outer(&a, 0);
    {
        session::binding inner(&b, 0);
        pmem::pfence();
    }
    pmem::pfence();
    EXPECT_EQ(a.events(), 1u);
    EXPECT_EQ(b.events(), 1u);
}

}  // namespace
}  // namespace ferrite::sim

namespace ferrite::sim {
namespace {

TEST(SessionWait, SpinLoopWithWaitHintDoesNotDeadlockTheScheduler) {
    // Thread 1 spins until thread 0 has persisted a flag; under the one-at-a-time scheduler
    // this only terminates if wait_hint() passes the token.
    alignas(64) std::array<std::uint64_t, 16> mem{};
    site_registry sites;
    token_scheduler sched(2, 3);
    session::options opts;
    opts.scheduler = &sched;
    session s(reinterpret_cast<std::byte*>(mem.data()), sizeof mem, 2, sites, std::move(opts));
    std::atomic<std::uint64_t> flag{0};
    std::thread waiter([&] {
        session::binding bind(&s, 1);
        sched.enter(1);
        while (flag.load() == 0) pmem::wait_hint();
        sched.leave(1);
    });
    std::thread setter([&] {
        session::binding bind(&s, 0);
        sched.enter(0);
        mem[0] = 1;
        pmem::pwb(&mem[0]);
        pmem::pfence();
        flag.store(1);
        sched.leave(0);
    });
    setter.join();
    waiter.join();
    EXPECT_EQ(s.events(), 2u) << "wait hints are not persistence events";
}

}  // namespace
}  // namespace ferrite::sim
