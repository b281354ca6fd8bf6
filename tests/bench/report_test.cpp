// tests/bench/report_test.cpp: the records `ferrite bench` prints (bench/report.hpp): JSON
// fields and types, unknown persistence as null, oversubscription, CSV columns and quoting,
// and what the table shows.
#include "bench/report.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace fb = ferrite::bench;

namespace {

fb::point_result point(std::string structure, unsigned threads, double median, bool counted = true) {
    fb::point_result p;
    p.structure = std::move(structure);
    p.workload = "push-pop";
    p.threads = threads;
    p.ops = 2000u * threads;
    p.seconds = 0.01;
    p.ops_per_sec = {median, median * 0.9, median * 1.1};
    p.persistence_counted = counted;
    p.pwb_per_op = 1.5;
    p.pfence_per_op = 0.25;
    p.batch_size = 3;
    p.baseline = "alpha";
    p.vs_baseline = median / 1e6;
    p.reps.resize(2);
    return p;
}

fb::run_info run() {
    fb::run_info r;
    r.reps = 2;
    r.ops_per_thread = 2000;
    r.machine = {4, "Some CPU, \"fast\" edition", "clwb"};
    return r;
}

}  // namespace

TEST(BenchReport, JsonRecordHasTheDocumentedFields) {
    const auto j = fb::record_json(point("alpha", 2, 1e6), run());
    for (const char* k : {"schema", "structure", "workload", "threads", "reps", "ops", "ops_per_thread", "duration",
                          "seconds", "ops_per_sec", "ops_per_sec_min", "ops_per_sec_max", "pwb_per_op",
                          "pfence_per_op", "nt_stores_per_op", "batch_size", "baseline", "vs_baseline",
                          "vs_baseline_paired", "oversubscribed", "initial_size", "ablation", "seed", "machine"})
        EXPECT_TRUE(j.contains(k)) << k;
    EXPECT_EQ(j["schema"], fb::bench_schema);
    EXPECT_EQ(j["structure"], "alpha");
    EXPECT_EQ(j["threads"], 2);
    EXPECT_EQ(j["reps"], 2);
    EXPECT_EQ(j["ops"], 4000);
    EXPECT_EQ(j["ops_per_thread"], 2000);
    EXPECT_TRUE(j["duration"].is_null());
    EXPECT_DOUBLE_EQ(j["ops_per_sec"].get<double>(), 1e6);
    EXPECT_DOUBLE_EQ(j["ops_per_sec_min"].get<double>(), 0.9e6);
    EXPECT_DOUBLE_EQ(j["ops_per_sec_max"].get<double>(), 1.1e6);
    EXPECT_DOUBLE_EQ(j["pwb_per_op"].get<double>(), 1.5);
    EXPECT_DOUBLE_EQ(j["pfence_per_op"].get<double>(), 0.25);
    EXPECT_DOUBLE_EQ(j["batch_size"].get<double>(), 3);
    EXPECT_EQ(j["oversubscribed"], false);
    EXPECT_EQ(j["machine"]["hardware_concurrency"], 4);
    EXPECT_EQ(j["machine"]["backend"], "clwb");
}

TEST(BenchReport, UncountedPersistenceIsNullNotZero) {
    const auto j = fb::record_json(point("pmdk", 1, 1e6, false), run());
    EXPECT_TRUE(j["pwb_per_op"].is_null());
    EXPECT_TRUE(j["pfence_per_op"].is_null());
    EXPECT_TRUE(j["nt_stores_per_op"].is_null());
}

TEST(BenchReport, OversubscribedMeansMoreThreadsThanHardwareThreads) {
    const auto r = run();
    EXPECT_FALSE(fb::oversubscribed(point("a", 4, 1), r.machine));
    EXPECT_TRUE(fb::oversubscribed(point("a", 5, 1), r.machine));
    EXPECT_EQ(fb::record_json(point("a", 8, 1), r)["oversubscribed"], true);
}

TEST(BenchReport, DurationModeRecordsTheDurationNotOpsPerThread) {
    auto r = run();
    r.ops_per_thread.reset();
    r.duration = 0.5;
    const auto j = fb::record_json(point("a", 1, 1), r);
    EXPECT_TRUE(j["ops_per_thread"].is_null());
    EXPECT_DOUBLE_EQ(j["duration"].get<double>(), 0.5);
}

TEST(BenchReport, JsonIsAListOfRecords) {
    const std::vector<fb::point_result> pts{point("alpha", 1, 2e6), point("beta", 1, 1e6)};
    const auto j = fb::records_json(pts, run());
    ASSERT_TRUE(j.is_array());
    ASSERT_EQ(j.size(), 2u);
    EXPECT_EQ(j[1]["structure"], "beta");
}

TEST(BenchReport, CsvHasAHeaderAndOneQuotedRowPerRecord) {
    const std::vector<fb::point_result> pts{point("alpha", 1, 2e6), point("beta", 8, 1e6, false)};
    const auto csv = fb::records_csv(pts, run());
    std::istringstream in(csv);
    std::string header, row1, row2, extra;
    std::getline(in, header);
    std::getline(in, row1);
    std::getline(in, row2);
    EXPECT_FALSE(std::getline(in, extra));
    std::string want;
    for (const auto& c : fb::csv_columns()) {
        if (!want.empty()) want += ',';
        want += c;
    }
    EXPECT_EQ(header, want);
    EXPECT_EQ(row1.rfind("alpha,push-pop,1,2,2000,2000,,", 0), 0u) << row1;
    EXPECT_NE(row1.find(",\"Some CPU, \"\"fast\"\" edition\",clwb"), std::string::npos) << row1;
    EXPECT_NE(row2.find(",1100000.0,,,,3.0,alpha,"), std::string::npos) << row2;  // unknown pwb/pfence/nt: empty
    EXPECT_NE(row2.find(",true,"), std::string::npos) << row2;       // 8 threads > 4
}

TEST(BenchReport, TableShowsEveryPointAndMarksOversubscription) {
    const std::vector<fb::point_result> pts{point("alpha", 4, 2e6), point("beta-longer-name", 4, 1e6, false),
                                            point("alpha", 8, 2e6), point("beta-longer-name", 8, 1e6, false)};
    const auto t = fb::table_text(pts, run());
    EXPECT_NE(t.find("workload push-pop"), std::string::npos) << t;
    EXPECT_NE(t.find("vs alpha"), std::string::npos) << t;
    EXPECT_NE(t.find("beta-longer-name"), std::string::npos) << t;
    EXPECT_NE(t.find("8*"), std::string::npos) << t;
    EXPECT_EQ(t.find("4*"), std::string::npos) << t;
    EXPECT_NE(t.find("oversubscribed"), std::string::npos) << t;
    EXPECT_NE(t.find("n/a"), std::string::npos) << t;
    EXPECT_NE(t.find("2.000"), std::string::npos) << t;  // Mops/s
}

// Subjects that report their combiners' own persistence (DFC) get two extra JSON fields and
// table columns; every other record keeps exactly the documented fields.
TEST(BenchReport, CombinerPersistenceIsReportedOnlyWhenPresent) {
    auto with = point("dfc-stack", 2, 1e6);
    with.combiner_pwb_per_op = 3.5;
    with.combiner_pfence_per_op = 2.0;
    const auto j = fb::record_json(with, run());
    EXPECT_DOUBLE_EQ(j["combiner_pwb_per_op"].get<double>(), 3.5);
    EXPECT_DOUBLE_EQ(j["combiner_pfence_per_op"].get<double>(), 2.0);
    EXPECT_DOUBLE_EQ(j["pwb_per_op"].get<double>(), 1.5) << "the total stays in the usual field";
    const auto plain = fb::record_json(point("alpha", 2, 1e6), run());
    EXPECT_FALSE(plain.contains("combiner_pwb_per_op"));
    EXPECT_FALSE(plain.contains("combiner_pfence_per_op"));
    const auto t = fb::table_text({point("alpha", 2, 1e6), with}, run());
    EXPECT_NE(t.find("combiner: pwb/op pfence/op"), std::string::npos) << t;
    EXPECT_NE(t.find("3.50"), std::string::npos) << t;
    EXPECT_EQ(fb::table_text({point("alpha", 2, 1e6)}, run()).find("combiner"), std::string::npos);
}

// Latency percentiles (sampled by the harness) are reported for every record: numbers when
// operations were timed, null (JSON) or '-' (table) when none was.
TEST(BenchReport, LatencyPercentilesAreReportedWhenSampled) {
    auto timed = point("alpha", 2, 1e6);
    timed.latency = fb::latency_summary{5000, 120, 4'500, 2'000'000};
    auto r = run();
    r.latency_every = 64;
    const auto j = fb::record_json(timed, r);
    EXPECT_EQ(j["latency_sample_every"], 64);
    EXPECT_EQ(j["latency_samples"], 5000);
    EXPECT_EQ(j["latency_p50_ns"], 120);
    EXPECT_EQ(j["latency_p99_ns"], 4500);
    EXPECT_EQ(j["latency_p999_ns"], 2000000);
    const auto none = fb::record_json(point("beta", 2, 1e6), r);
    EXPECT_EQ(none["latency_samples"], 0);
    EXPECT_TRUE(none["latency_p50_ns"].is_null());
    EXPECT_TRUE(none["latency_p999_ns"].is_null());
    const auto t = fb::table_text({timed, point("beta", 2, 1e6)}, r);
    EXPECT_NE(t.find("p50       p99     p99.9"), std::string::npos) << t;
    EXPECT_NE(t.find("120ns"), std::string::npos) << t;
    EXPECT_NE(t.find("4500ns"), std::string::npos) << t;
    EXPECT_NE(t.find("2.00ms"), std::string::npos) << t;
    EXPECT_NE(t.find("one operation in 64"), std::string::npos) << t;
    const auto csv = fb::records_csv({timed}, r);
    EXPECT_NE(csv.find(",64,5000,120,4500,2000000,,,,,,,,\n"), std::string::npos) << csv;
}

// Keyed records say what the keys were (prefill, distribution, set-mix's reads); sequence
// records do not carry those fields, and their CSV cells are empty.
TEST(BenchReport, KeyedRecordsCarryTheirKeys) {
    auto keyed = point("map-mutex", 1, 1e6);
    keyed.workload = "set-mix";
    keyed.family = fb::op_family::keyed;
    keyed.initial_size = 1000;
    keyed.distribution = "uniform";
    keyed.reads_percent = 80;
    const auto j = fb::record_json(keyed, run());
    EXPECT_EQ(j["keys"], 1000);
    EXPECT_EQ(j["distribution"], "uniform");
    EXPECT_EQ(j["reads_percent"], 80);
    const auto plain = fb::record_json(point("alpha", 1, 1e6), run());
    EXPECT_FALSE(plain.contains("keys"));
    EXPECT_FALSE(plain.contains("distribution"));
    const auto t = fb::table_text({keyed}, run());
    EXPECT_NE(t.find("workload set-mix: 2000 ops/thread, 1000 keys, uniform, 80% reads"), std::string::npos) << t;
    EXPECT_NE(fb::records_csv({keyed}, run()).find(",1000,uniform,80,,,,,\n"), std::string::npos);
}

// set-growth records add the steady-state insert latency and the growth's p99.9 over it;
// set-recovery rows show the open's time in ms. Other records keep their fields.
TEST(BenchReport, GrowthAndRecoveryRecordsSayWhatTheyMeasured) {
    auto g = point("soft-hash", 2, 1e6);
    g.workload = "set-growth";
    g.kind = fb::pattern::set_growth;
    g.family = fb::op_family::keyed;
    g.initial_size = 4096;
    g.distribution = "none";
    g.latency = fb::latency_summary{900, 300, 2'000, 6'000};
    g.steady_latency = fb::latency_summary{800, 250, 1'500, 3'000};
    const auto j = fb::record_json(g, run());
    EXPECT_EQ(j["steady_latency_samples"], 800);
    EXPECT_EQ(j["steady_latency_p999_ns"], 3000);
    EXPECT_DOUBLE_EQ(j["growth_vs_steady_p999"].get<double>(), 2.0);
    const auto t = fb::table_text({g}, run());
    EXPECT_NE(t.find("inserts from 1024 to 4096 keys"), std::string::npos) << t;
    EXPECT_NE(t.find("p99.9 growth/steady"), std::string::npos) << t;
    EXPECT_NE(t.find("2.00x"), std::string::npos) << t;
    EXPECT_NE(fb::records_csv({g}, run()).find(",800,250,1500,3000,2.0\n"), std::string::npos);
    EXPECT_FALSE(fb::record_json(point("alpha", 1, 1e6), run()).contains("steady_latency_p999_ns"));

    auto r = point("soft-hash", 2, 5e6, false);
    r.workload = "set-recovery";
    r.kind = fb::pattern::set_recovery;
    r.family = fb::op_family::keyed;
    r.initial_size = 1000000;
    r.seconds = 0.125;
    const auto rt = fb::table_text({r}, run());
    EXPECT_NE(rt.find("open() of 1000000 keys"), std::string::npos) << rt;
    EXPECT_NE(rt.find("125.0"), std::string::npos) << rt;
    EXPECT_NE(rt.find("set-recovery: ms = median time"), std::string::npos) << rt;
    EXPECT_EQ(rt.find("tree-recovery:"), std::string::npos) << rt;

    auto tr = r;  // tree-recovery: the open and the first lookup, sub-millisecond times in full
    tr.structure = "cpnvm-tree-lazy";
    tr.workload = "tree-recovery";
    tr.kind = fb::pattern::tree_recovery;
    tr.seconds = 0.000271;
    const auto tt = fb::table_text({tr}, run());
    EXPECT_NE(tt.find("open() of 1000000 keys and the first lookup"), std::string::npos) << tt;
    EXPECT_NE(tt.find("0.271"), std::string::npos) << tt;
    EXPECT_NE(tt.find("tree-recovery: ms = median time of the structure's open() and its first completed lookup"),
              std::string::npos) << tt;
    EXPECT_EQ(tt.find("set-recovery: ms"), std::string::npos) << tt;
}
