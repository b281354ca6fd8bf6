// The one vocabulary of the combining engines (combining/stats.hpp): every engine's stats()
// is the one record, and the same workload run through a PFC stack and vector, an FPFC
// stack and a DFC stack reads back through the same fields: the operations applied, passes
// and mean batch size, the persistence instructions (nonzero, the combiner's equal to the
// total, the total equal to what the threads' own counters saw). Also: no_trace and the
// crash targets' shapes of trace satisfy the one trace concept.
#include "ferrite/combining/stats.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <unistd.h>
#include <vector>

#include "../containers/bump_heap.hpp"
#include "../containers/dfc_test_support.hpp"
#include "ferrite/combining/dfc.hpp"
#include "ferrite/combining/fpfc.hpp"
#include "ferrite/combining/pfc.hpp"
#include "ferrite/containers/deque.hpp"
#include "ferrite/containers/dfc_deque.hpp"
#include "ferrite/containers/dfc_queue.hpp"
#include "ferrite/containers/dfc_stack.hpp"
#include "ferrite/containers/queue.hpp"
#include "ferrite/containers/stack.hpp"
#include "ferrite/containers/vector.hpp"

namespace ferrite {
namespace {

using ferrite_test::bump_heap;
using ferrite_test::dfc_region_buffer;
namespace c = containers;
namespace fc = combining;
using u64 = std::uint64_t;

// ---- every engine's and every container's stats() is the one record ------------------------
template <class T>
constexpr bool reports_the_record = std::is_same_v<decltype(std::declval<const T&>().stats()), fc::combining_stats>;

using vcore = c::persistent_vector_core<u64, bump_heap>;
using dcore = c::persistent_deque_core<u64, bump_heap>;
static_assert(reports_the_record<fc::pfc<vcore>>, "pfc::stats() must return combining::combining_stats");
static_assert(reports_the_record<fc::fpfc<vcore>>, "fpfc::stats() must return combining::combining_stats");
static_assert(reports_the_record<fc::pfc<dcore, sync::pure_spin>>, "pfc::stats() must return combining_stats");
static_assert(reports_the_record<dfc_stack<u64>::engine_type>, "dfc::stats() must return combining::combining_stats");
static_assert(reports_the_record<dfc_queue<u64>::engine_type>, "dfc::stats() must return combining::combining_stats");
static_assert(reports_the_record<dfc_deque<u64>::engine_type>, "dfc::stats() must return combining::combining_stats");
static_assert(reports_the_record<vector<u64, bump_heap>> && reports_the_record<stack<u64, bump_heap, c::use_fpfc>> &&
                  reports_the_record<deque<u64, bump_heap>> && reports_the_record<queue<u64, bump_heap>> &&
                  reports_the_record<dfc_stack<u64>> && reports_the_record<dfc_queue<u64>> &&
                  reports_the_record<dfc_deque<u64>>,
              "every combining container's stats() must return combining::combining_stats");

// ---- one trace concept ----------------------------------------------------------------------
static_assert(fc::combining_trace<fc::no_trace, c::vector_request<u64>, c::vector_response<u64>>);
static_assert(fc::combining_trace<fc::no_trace, c::deque_request<u64>, c::deque_response<u64>>);
static_assert(fc::combining_trace<fc::no_trace, fc::dfc_op, fc::dfc_response>);
static_assert(std::is_same_v<c::no_trace, fc::no_trace> && std::is_same_v<fc::dfc_no_trace, fc::no_trace>,
              "the containers' and the DFC engine's default traces are the one no_trace");
struct old_dfc_hooks {  // the DFC engine's former vocabulary is no longer accepted
    void respond(const fc::dfc_op&, const fc::dfc_response&, std::uint64_t) noexcept {}
    void phase_done(std::uint64_t) noexcept {}
};
static_assert(!fc::combining_trace<old_dfc_hooks, fc::dfc_op, fc::dfc_response>);

// ---- the record's arithmetic ------------------------------------------------------------------
TEST(CombiningStats, MeanBatchSizeRatesAndDifferences) {
    fc::combining_stats s;
    EXPECT_EQ(s.mean_batch_size(), 0);
    EXPECT_EQ(s.per_op(s.total).pwb_lines, 0);
    s.passes = 4;
    s.operations = 10;
    s.combiner = {20, 8, 0, 5};
    s.total = {22, 8, 0, 5};
    EXPECT_DOUBLE_EQ(s.mean_batch_size(), 2.5);
    EXPECT_DOUBLE_EQ(s.per_op(s.total).pwb_lines, 2.2);
    EXPECT_DOUBLE_EQ(s.per_pass(s.combiner).pfences, 2.0);
    EXPECT_DOUBLE_EQ(s.per_op(s.combiner).nt_stores, 0.5);
    fc::combining_stats before;
    before.passes = 1;
    before.operations = 2;
    before.combiner = {5, 2, 0, 1};
    before.total = {5, 2, 0, 1};
    const auto d = s - before;
    EXPECT_EQ(d.passes, 3u);
    EXPECT_EQ(d.operations, 8u);
    EXPECT_EQ(d.combiner, (pmem::counters{15, 6, 0, 4}));
    EXPECT_EQ(d.total, (pmem::counters{17, 6, 0, 4}));
}

TEST(CombiningStats, RecorderCountsPassesWithOperationsAndOwnPersistence) {
    fc::stats_recorder r;
    r.on_pass(0, {3, 1, 0, 0});  // a pass that applied nothing is no pass
    r.on_pass(3, {4, 2, 0, 1});
    r.after_operation({4, 2, 0, 1}, {4, 2, 0, 1});  // the combiner: all of it in its pass
    r.after_operation({1, 1, 0, 0}, {});            // a caller that persisted on its own
    const auto s = r.snapshot();
    EXPECT_EQ(s.passes, 1u);
    EXPECT_EQ(s.operations, 3u);
    EXPECT_EQ(s.combiner, (pmem::counters{4, 2, 0, 1}));
    EXPECT_EQ(s.total, (pmem::counters{5, 3, 0, 1}));
}

// ---- the same workload through every engine ------------------------------------------------
constexpr unsigned threads = 4;
constexpr unsigned pushes_per_thread = 200;  // then as many pops
constexpr u64 operations = u64{threads} * pushes_per_thread * 2;

// Runs the workload: each thread pushes, then pops, through push(tid, v) / pop(tid). Returns
// the sum of the threads' own counter differences.
template <class Push, class Pop>
pmem::counters run_workload(Push&& push, Pop&& pop) {
    std::mutex m;
    pmem::counters seen;
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t)
        ts.emplace_back([&, t] {
            const auto before = pmem::thread_counters();
            for (unsigned i = 0; i < pushes_per_thread; ++i) ASSERT_TRUE(push(t, u64{t} << 32 | i));
            for (unsigned i = 0; i < pushes_per_thread; ++i) ASSERT_TRUE(pop(t).has_value());
            const auto mine = pmem::thread_counters() - before;
            std::lock_guard lock(m);
            seen += mine;
        });
    for (auto& t : ts) t.join();
    return seen;
}

// The same fields, whatever the engine.
void expect_one_vocabulary(const fc::combining_stats& s, const pmem::counters& seen, const char* what) {
    SCOPED_TRACE(what);
    EXPECT_EQ(s.operations, operations);
    EXPECT_GE(s.passes, 1u);
    EXPECT_LE(s.passes, s.operations);
    EXPECT_GE(s.mean_batch_size(), 1.0);
    EXPECT_DOUBLE_EQ(s.mean_batch_size(), static_cast<double>(s.operations) / static_cast<double>(s.passes));
    EXPECT_GT(s.combiner.pwb_lines, 0u);
    EXPECT_GT(s.combiner.pfences, 0u);
    EXPECT_GT(s.per_op(s.total).pwb_lines, 0);
    EXPECT_GT(s.per_pass(s.total).pfences, 0);
    // Nothing persists outside a pass in any engine, and the record misses nothing.
    EXPECT_EQ(s.total, s.combiner);
    EXPECT_EQ(s.total, seen);
}

class OneVocabularyTest : public ::testing::Test {
protected:
    void SetUp() override {
        path_ = "/dev/shm/ferrite-stats-test-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name();
        std::filesystem::remove(path_);
        pool_.emplace(pmem::pool::create(path_, "stats-test", 32 << 20));
        heap_.emplace(*pool_, 16 << 20);
    }
    void TearDown() override {
        pool_.reset();
        std::filesystem::remove(path_);
    }
    template <class Sel>
    void stack_on() {
        u64 anchor = 0;
        auto s = stack<u64, bump_heap, Sel>::create(*pool_, *heap_, anchor, 2);  // grows inside passes
        const auto seen = run_workload([&](unsigned, u64 v) { return s.push(v); }, [&](unsigned) { return s.pop(); });
        expect_one_vocabulary(s.stats(), seen, "stack");
        EXPECT_DOUBLE_EQ(s.mean_batch_size(), s.stats().mean_batch_size());
    }
    std::string path_;
    std::optional<pmem::pool> pool_;
    std::optional<bump_heap> heap_;
};

TEST_F(OneVocabularyTest, PfcStack) { stack_on<c::use_pfc>(); }
TEST_F(OneVocabularyTest, FpfcStack) { stack_on<c::use_fpfc>(); }

TEST_F(OneVocabularyTest, PfcVector) {
    u64 anchor = 0;
    auto v = vector<u64, bump_heap>::create(*pool_, *heap_, anchor, 2);
    const auto seen =
        run_workload([&](unsigned, u64 x) { return v.push_back(x); }, [&](unsigned) { return v.pop_back(); });
    expect_one_vocabulary(v.stats(), seen, "vector");
    EXPECT_DOUBLE_EQ(v.mean_batch_size(), v.stats().mean_batch_size());
}

TEST_F(OneVocabularyTest, DfcStack) {
    using ds = dfc_stack<u64>;
    dfc_region_buffer region(ds::required_bytes(threads, 4 * operations));
    auto s = ds::create(region.data(), region.size(), threads);
    const auto seen =
        run_workload([&](unsigned t, u64 x) { return s.push(t, x); }, [&](unsigned t) { return s.pop(t); });
    expect_one_vocabulary(s.stats(), seen, "dfc_stack");
    EXPECT_EQ(s.stats(), s.engine().stats());
    EXPECT_DOUBLE_EQ(s.mean_batch_size(), s.stats().mean_batch_size());
}

}  // namespace
}  // namespace ferrite
