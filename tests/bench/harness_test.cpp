// tests/bench/harness_test.cpp: the measurement harness (bench/harness.hpp) on the in-test
// counting subject: exact operation counts with fixed ops, a fresh subject per measurement,
// attach before any operation, persistence per op from the pmem counters, ratios to the
// baseline, duration mode, validation errors and worker failures.
#include "bench/harness.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "counting_subject.hpp"
#include "ferrite/error.hpp"

namespace fb = ferrite::bench;
using fb::op;
using fb::testing::counting_kind;
using fb::testing::keyed_counting_kind;
using fb::testing::ledger;

namespace {

fb::bench_config config(std::vector<fb::measured_structure> s, const char* workload) {
    fb::bench_config c;
    c.structures = std::move(s);
    c.workloads = {fb::find_workload(workload)};
    c.threads = {1, 3};
    c.reps = 3;
    c.ops_per_thread = 1000;
    return c;
}

}  // namespace

TEST(BenchHarness, FixedOpsCountsEveryOperationExactly) {
    ledger l;
    const auto kind = counting_kind(l);
    auto cfg = config({kind}, "push-pop");
    const auto r = fb::measure(kind, *cfg.workloads[0], 3, cfg, 0);
    EXPECT_EQ(r.ops, 3000u);
    EXPECT_EQ(l.total(), 3000u);
    EXPECT_EQ(l.count(op::push_back), 1500u);
    EXPECT_EQ(l.count(op::pop_back), 1500u);
    EXPECT_EQ(l.made.load(), 1u);
    EXPECT_EQ(l.attached.load(), 3u);
    EXPECT_EQ(l.detached.load(), 3u);
    EXPECT_EQ(l.ops_before_attach.load(), 0u);
    EXPECT_GT(r.seconds, 0);
    EXPECT_GT(r.ops_per_sec(), 0);
    // One pwb per op, one pfence per two ops, counted per worker and summed.
    EXPECT_EQ(r.persistence.pwb_lines, 3000u);
    EXPECT_EQ(r.persistence.pfences, 1500u);
    EXPECT_DOUBLE_EQ(r.batch_size, 2.5);
    EXPECT_TRUE(r.persistence_counted);
}

TEST(BenchHarness, SubjectGetsThreadsAndInitialSize) {
    ledger l;
    const auto kind = counting_kind(l);
    auto cfg = config({kind}, "get");
    fb::measure(kind, *cfg.workloads[0], 2, cfg, 0);
    cfg.initial_size = 77;
    cfg.options.futex_wait = false;
    fb::measure(kind, *cfg.workloads[0], 4, cfg, 0);
    ASSERT_EQ(l.configs.size(), 2u);
    EXPECT_EQ(l.configs[0].threads, 2u);
    EXPECT_EQ(l.configs[0].initial_size, fb::default_initial_size);
    EXPECT_EQ(l.configs[1].threads, 4u);
    EXPECT_EQ(l.configs[1].initial_size, 77u);
    EXPECT_FALSE(l.configs[1].options.futex_wait);
    EXPECT_EQ(l.count(op::get), 2000u + 4000u);
}

TEST(BenchHarness, RunBenchMakesAFreshSubjectPerMeasurementAndReportsRatios) {
    ledger base_l, other_l;
    const auto base = counting_kind(base_l, "base");
    const auto other = counting_kind(other_l, "other", {op::push_back, op::pop_back}, {false, 0, 0});
    auto cfg = config({base, other}, "push-pop");
    std::uint64_t calls = 0, last_total = 0;
    cfg.on_progress = [&](const std::string&, std::uint64_t, std::uint64_t total) {
        ++calls;
        last_total = total;
    };
    const auto points = fb::run_bench(cfg);
    EXPECT_EQ(base_l.made.load(), 2u * 3u);  // 2 thread counts x 3 reps
    EXPECT_EQ(other_l.made.load(), 2u * 3u);
    EXPECT_EQ(base_l.total(), 3u * (1000u + 3000u));
    EXPECT_EQ(last_total, 12u);
    EXPECT_EQ(calls, 13u);  // before each measurement, and once when done
    ASSERT_EQ(points.size(), 4u);
    const char* names[] = {"base", "other", "base", "other"};
    const unsigned threads[] = {1, 1, 3, 3};
    for (std::size_t i = 0; i < points.size(); ++i) {
        const auto& p = points[i];
        EXPECT_EQ(p.structure, names[i]);
        EXPECT_EQ(p.workload, "push-pop");
        EXPECT_EQ(p.threads, threads[i]);
        EXPECT_EQ(p.reps.size(), 3u);
        EXPECT_EQ(p.ops, 1000u * threads[i]);
        EXPECT_EQ(p.baseline, "base");
        EXPECT_LE(p.ops_per_sec.min, p.ops_per_sec.median);
        EXPECT_LE(p.ops_per_sec.median, p.ops_per_sec.max);
        const double base_median = points[i - i % 2].ops_per_sec.median;
        EXPECT_DOUBLE_EQ(p.vs_baseline, p.ops_per_sec.median / base_median);
        // The paired ratio: the median of repetition r's ratio to the baseline's repetition r.
        const auto& base_reps = points[i - i % 2].reps;
        std::vector<double> pairs;
        for (std::size_t r = 0; r < 3; ++r) pairs.push_back(p.reps[r].ops_per_sec() / base_reps[r].ops_per_sec());
        std::sort(pairs.begin(), pairs.end());
        EXPECT_DOUBLE_EQ(p.vs_baseline_paired, pairs[1]);
    }
    EXPECT_DOUBLE_EQ(points[0].vs_baseline, 1.0);
    EXPECT_DOUBLE_EQ(points[0].pwb_per_op, 1.0);
    EXPECT_DOUBLE_EQ(points[0].pfence_per_op, 0.5);
    EXPECT_DOUBLE_EQ(points[0].batch_size, 2.5);
    EXPECT_TRUE(points[0].persistence_counted);
    EXPECT_FALSE(points[1].persistence_counted);
    EXPECT_DOUBLE_EQ(points[1].batch_size, 0);
}

// Repetitions interleave: rep r of every thread count before rep r + 1; within a thread count
// the structures alternate between the listed order and the reverse one (ABBA).
TEST(BenchHarness, RepetitionsInterleaveAndAlternateTheStructuresOrder) {
    ledger a_l, b_l;
    const auto a = counting_kind(a_l, "a");
    const auto b = counting_kind(b_l, "b");
    auto cfg = config({a, b}, "push-pop");
    cfg.ops_per_thread = 10;
    std::vector<std::string> order;
    cfg.on_progress = [&](const std::string& what, std::uint64_t, std::uint64_t) { order.push_back(what); };
    (void)fb::run_bench(cfg);
    const std::vector<std::string> expected = {
        "a push-pop 1t", "b push-pop 1t", "a push-pop 3t", "b push-pop 3t",  // rep 0
        "b push-pop 1t", "a push-pop 1t", "b push-pop 3t", "a push-pop 3t",  // rep 1
        "a push-pop 1t", "b push-pop 1t", "a push-pop 3t", "b push-pop 3t",  // rep 2
        "done"};
    EXPECT_EQ(order, expected);
}

TEST(BenchHarness, AStructureWithItsOwnAblationRunsBesideTheRunsOne) {
    ledger l;
    const auto kind = counting_kind(l, "base");
    auto no_elimination = *fb::ablation_from_string("no-elimination");
    auto cfg = config({kind, {kind, no_elimination}}, "push-pop");
    cfg.threads = {2};
    cfg.reps = 1;
    cfg.options.futex_wait = false;  // the run's ablation: only the first entry keeps it
    const auto points = fb::run_bench(cfg);
    ASSERT_EQ(points.size(), 2u);
    EXPECT_EQ(points[0].structure, "base");
    EXPECT_EQ(points[0].ablation, "no-futex");
    EXPECT_EQ(points[1].structure, "base:no-elimination");
    EXPECT_EQ(points[1].ablation, "no-elimination");
    EXPECT_EQ(points[1].baseline, "base");
    ASSERT_EQ(l.configs.size(), 2u);  // made in entry order
    EXPECT_FALSE(l.configs[0].options.futex_wait);
    EXPECT_TRUE(l.configs[0].options.elimination);
    EXPECT_TRUE(l.configs[1].options.futex_wait);
    EXPECT_FALSE(l.configs[1].options.elimination);
}

TEST(BenchHarness, SummaryOfKnownRepetitions) {
    ledger l;
    const auto kind = counting_kind(l);
    std::vector<fb::rep_result> reps(3);
    reps[0].ops = 1000, reps[0].seconds = 1.0;   // 1000/s
    reps[1].ops = 1000, reps[1].seconds = 0.25;  // 4000/s
    reps[2].ops = 1000, reps[2].seconds = 0.5;   // 2000/s
    for (auto& r : reps) r.persistence.pwb_lines = 3000, r.persistence.pfences = 1000, r.batch_size = 4;
    reps[2].batch_size = 1;
    const auto p = fb::summarize_point(kind, *fb::find_workload("push-pop"), 2, 0, reps);
    EXPECT_DOUBLE_EQ(p.ops_per_sec.median, 2000);
    EXPECT_DOUBLE_EQ(p.ops_per_sec.min, 1000);
    EXPECT_DOUBLE_EQ(p.ops_per_sec.max, 4000);
    EXPECT_DOUBLE_EQ(p.seconds, 0.5);
    EXPECT_EQ(p.ops, 1000u);
    EXPECT_DOUBLE_EQ(p.pwb_per_op, 3.0);
    EXPECT_DOUBLE_EQ(p.pfence_per_op, 1.0);
    EXPECT_DOUBLE_EQ(p.batch_size, 3.0);
}

TEST(BenchHarness, DurationModeStopsEveryWorkerOnAMultipleOf64) {
    ledger l;
    const auto kind = counting_kind(l);
    auto cfg = config({kind}, "rand-op");
    cfg.seconds = 0.05;
    const auto r = fb::measure(kind, *cfg.workloads[0], 2, cfg, 0);
    EXPECT_GT(r.ops, 0u);
    EXPECT_EQ(r.ops % 64, 0u);
    EXPECT_EQ(r.ops, l.total());
    EXPECT_GE(r.seconds, 0.05);
}

TEST(BenchHarness, ValidationRejectsWhatCannotRun) {
    ledger l;
    const auto stack_like = counting_kind(l, "stack-like", {op::push_back, op::pop_back});
    auto cfg = config({stack_like}, "get");
    try {
        fb::validate(cfg);
        FAIL() << "a structure without get ran the get workload";
    } catch (const ferrite::usage_error& e) {
        EXPECT_NE(std::string(e.what()).find("'stack-like' cannot run workload 'get': it lacks get"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_THROW(fb::run_bench(cfg), ferrite::usage_error);
    EXPECT_EQ(l.made.load(), 0u);

    cfg = config({stack_like}, "push-pop");
    EXPECT_NO_THROW(fb::validate(cfg));
    auto bad = cfg;
    bad.threads = {1, 0};
    EXPECT_THROW(fb::validate(bad), ferrite::usage_error);
    bad = cfg;
    bad.reps = 0;
    EXPECT_THROW(fb::validate(bad), ferrite::usage_error);
    bad = cfg;
    bad.ops_per_thread = 0;
    EXPECT_THROW(fb::validate(bad), ferrite::usage_error);
    bad.seconds = 0.1;  // duration mode ignores --ops
    EXPECT_NO_THROW(fb::validate(bad));
    bad.seconds = -1;
    EXPECT_THROW(fb::validate(bad), ferrite::usage_error);
    bad = cfg;
    bad.structures.clear();
    EXPECT_THROW(fb::validate(bad), ferrite::usage_error);
}

TEST(BenchHarness, AWorkerFailureIsRethrownAfterAllWorkersJoin) {
    ledger l;
    const auto failing = counting_kind(l, "failing", {op::push_back, op::pop_back}, {true, 0, 10});
    auto cfg = config({failing}, "push-pop");
    EXPECT_THROW(fb::measure(failing, *cfg.workloads[0], 3, cfg, 0), std::runtime_error);
    EXPECT_EQ(l.detached.load(), 3u);
}

TEST(BenchHarness, AblationNamesRoundTrip) {
    for (const char* n : {"none", "no-nt", "no-futex", "no-nt-no-futex", "no-elimination", "no-tid-claims", "two-fence"}) {
        const auto o = fb::ablation_from_string(n);
        ASSERT_TRUE(o) << n;
        EXPECT_EQ(fb::ablation_name(*o), n);
    }
    EXPECT_FALSE(fb::ablation_from_string("no-such"));
    const auto o = fb::ablation_from_string("no-nt-no-futex");
    EXPECT_FALSE(o->nt_stores);
    EXPECT_FALSE(o->futex_wait);
    EXPECT_TRUE(o->elimination);
}

TEST(BenchHarness, LatencyIsSampledOneOperationInEveryNOnAverage) {
    ledger l;
    const auto kind = counting_kind(l);
    auto cfg = config({kind}, "push-pop");
    cfg.ops_per_thread = 64000;
    cfg.latency_every = 64;
    const auto r = fb::measure(kind, *cfg.workloads[0], 2, cfg, 0);
    // 2 x 64000 ops, one timed in 64 on average: about 2000 samples.
    EXPECT_GT(r.latency.count(), 1700u);
    EXPECT_LT(r.latency.count(), 2300u);
    EXPECT_GT(r.latency.value_at_percentile(99.9), 0u);
    EXPECT_LE(r.latency.value_at_percentile(50), r.latency.value_at_percentile(99));

    cfg.latency_every = 1;  // every operation
    EXPECT_EQ(fb::measure(kind, *cfg.workloads[0], 1, cfg, 0).latency.count(), 64000u);
    cfg.latency_every = 0;  // off
    EXPECT_EQ(fb::measure(kind, *cfg.workloads[0], 2, cfg, 0).latency.count(), 0u);
}

TEST(BenchHarness, PointLatencyMergesEveryRepetition) {
    ledger l;
    const auto kind = counting_kind(l);
    std::vector<fb::rep_result> reps(2);
    for (std::uint64_t v = 1; v <= 500; ++v) reps[0].latency.record(v);
    for (std::uint64_t v = 501; v <= 1000; ++v) reps[1].latency.record(v);
    const auto p = fb::summarize_point(kind, *fb::find_workload("push-pop"), 1, 0, reps);
    ASSERT_TRUE(p.latency);
    EXPECT_EQ(p.latency->samples, 1000u);
    EXPECT_EQ(p.latency->p50_ns, 500u);
    EXPECT_EQ(p.latency->p99_ns, 990u);
    EXPECT_EQ(p.latency->p999_ns, 999u);
    EXPECT_FALSE(fb::summarize_point(kind, *fb::find_workload("push-pop"), 1, 0, std::vector<fb::rep_result>(2)).latency);
}

namespace {

std::string usage_message(const fb::bench_config& cfg) {
    try {
        fb::validate(cfg);
    } catch (const ferrite::usage_error& e) {
        return e.what();
    }
    return "(accepted)";
}

}  // namespace

TEST(BenchHarness, SequenceAndKeyedStructuresRefuseTheOtherFamilysWorkloads) {
    ledger l;
    const auto seq = counting_kind(l, "seq");
    const auto keyed = keyed_counting_kind(l, "keyed");
    EXPECT_NE(usage_message(config({seq}, "ycsb-a"))
                  .find("structure 'seq' is a sequence structure and cannot run the keyed workload 'ycsb-a'"),
              std::string::npos);
    EXPECT_NE(usage_message(config({keyed}, "push-pop"))
                  .find("structure 'keyed' is a keyed structure and cannot run the sequence workload 'push-pop'"),
              std::string::npos);
    // get is in both vocabularies: the family, not the operation list, keeps them apart.
    EXPECT_NE(usage_message(config({seq}, "ycsb-c")).find("sequence structure"), std::string::npos);
    EXPECT_EQ(usage_message(config({keyed}, "ycsb-e")), "(accepted)");
    const auto no_scan = keyed_counting_kind(l, "no-scan", {op::insert, op::erase, op::contains, op::get, op::put});
    EXPECT_NE(usage_message(config({no_scan}, "ycsb-e")).find("'no-scan' cannot run workload 'ycsb-e': it lacks scan"),
              std::string::npos);
}

TEST(BenchHarness, KeyOptionsMustApplyToAWorkloadOfTheRun) {
    ledger l;
    const auto seq = counting_kind(l, "seq");
    const auto keyed = keyed_counting_kind(l, "keyed");
    auto cfg = config({seq}, "push-pop");
    cfg.keys = 10;
    EXPECT_NE(usage_message(cfg).find("--keys"), std::string::npos);
    cfg = config({seq}, "push-pop");
    cfg.distribution = fb::key_distribution::zipfian;
    EXPECT_NE(usage_message(cfg).find("--distribution"), std::string::npos);
    cfg = config({keyed}, "ycsb-a");
    cfg.initial_size = 10;
    EXPECT_NE(usage_message(cfg).find("--initial-size"), std::string::npos);
    cfg = config({keyed}, "ycsb-a");
    cfg.reads_percent = 50;
    EXPECT_NE(usage_message(cfg).find("--reads applies to the set-mix workload only"), std::string::npos);
    cfg = config({keyed}, "set-mix");
    cfg.reads_percent = 101;
    EXPECT_NE(usage_message(cfg).find("--reads is a percentage"), std::string::npos);
    cfg.reads_percent = 100;
    cfg.keys = 10;
    cfg.distribution = fb::key_distribution::zipfian;
    EXPECT_EQ(usage_message(cfg), "(accepted)");
}

TEST(BenchHarness, KeyedRunsPrefillKeysAndRecordWhatTheyDrew) {
    ledger l;
    const auto keyed = keyed_counting_kind(l, "keyed");
    auto cfg = config({keyed}, "set-mix");
    cfg.threads = {2};
    cfg.reps = 1;
    cfg.keys = 300;
    cfg.reads_percent = 80;
    const auto points = fb::run_bench(cfg);
    ASSERT_EQ(points.size(), 1u);
    ASSERT_EQ(l.configs.size(), 1u);
    EXPECT_EQ(l.configs[0].initial_size, 300u);
    EXPECT_EQ(points[0].initial_size, 300u);
    EXPECT_EQ(points[0].family, fb::op_family::keyed);
    EXPECT_EQ(points[0].distribution, "uniform");
    EXPECT_EQ(points[0].reads_percent, 80u);
    EXPECT_EQ(l.count(op::contains) + l.count(op::insert) + l.count(op::erase), 2000u);
    EXPECT_GT(l.count(op::contains), 1400u);  // 80 % of 2000, give or take
    ASSERT_TRUE(points[0].latency);

    cfg = config({keyed}, "ycsb-a");
    EXPECT_EQ(fb::initial_size_for(cfg, *cfg.workloads[0]), fb::default_keys);
    EXPECT_EQ(fb::initial_size_for(cfg, *fb::find_workload("ycsb-load")), 0u);
    cfg.initial_size = 5;  // sequence workloads' option: not the keys
    EXPECT_EQ(fb::initial_size_for(cfg, *cfg.workloads[0]), fb::default_keys);
    EXPECT_EQ(fb::key_options_for(cfg, *cfg.workloads[0]).distribution, fb::key_distribution::zipfian);
}
