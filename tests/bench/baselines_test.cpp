// tests/bench/baselines_test.cpp: the PMDK and map baselines (bench/baselines/) run every
// workload they support (of their family), single- and multi-threaded, through the real
// harness, and leave no pool file behind; every registered structure can run at least one
// workload; the map baselines are registered as keyed, map-mutex without scan.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <unistd.h>

#include "bench/harness.hpp"
#include "bench/registry.hpp"

namespace fb = ferrite::bench;
namespace fs = std::filesystem;

namespace {

struct scratch_dir {
    fs::path path;
    scratch_dir() {
        path = fs::path("/dev/shm") / ("ferrite-bench-test-" + std::to_string(::getpid()));
        fs::create_directories(path);
    }
    ~scratch_dir() { fs::remove_all(path); }
};

}  // namespace

TEST(BenchBaselines, RegistryListsThePmdkBaselines) {
    for (const char* n : {"vector-pmdk", "stack-pmdk", "queue-pmdk"}) {
        const auto* s = fb::find_subject(n);
        ASSERT_NE(s, nullptr) << n;
        EXPECT_FALSE(s->summary.empty());
        EXPECT_TRUE(s->make);
    }
    EXPECT_EQ(fb::find_subject("vector-stdmutex-volatile"), nullptr);
    EXPECT_EQ(fb::find_subject("no-such"), nullptr);
}

TEST(BenchBaselines, RegistryListsTheKeyedMapBaselines) {
    const auto* m = fb::find_subject("map-mutex");
    const auto* o = fb::find_subject("ordered-map-mutex");
    ASSERT_NE(m, nullptr);
    ASSERT_NE(o, nullptr);
    EXPECT_EQ(m->family, fb::op_family::keyed);
    EXPECT_EQ(o->family, fb::op_family::keyed);
    EXPECT_EQ(fb::find_subject("vector-pmdk")->family, fb::op_family::sequence);
    for (const char* w : {"set-mix", "ycsb-load", "ycsb-a", "ycsb-b", "ycsb-c", "ycsb-e"}) {
        EXPECT_TRUE(fb::can_run(*o, *fb::find_workload(w))) << w;
        EXPECT_EQ(fb::can_run(*m, *fb::find_workload(w)), std::string(w) != "ycsb-e") << w;
        EXPECT_FALSE(fb::can_run(*fb::find_subject("vector-pmdk"), *fb::find_workload(w))) << w;
    }
    EXPECT_FALSE(fb::can_run(*m, *fb::find_workload("get")));
}

TEST(BenchBaselines, EverySupportedWorkloadRunsAndRemovesItsPool) {
    scratch_dir dir;
    for (const auto& s : fb::subjects()) {
        int runnable = 0;
        for (const auto& w : fb::workloads()) {
            if (!fb::can_run(s, w)) continue;
            ++runnable;
            fb::bench_config cfg;
            cfg.structures = {s};
            cfg.workloads = {&w};
            cfg.threads = {1, 3};
            cfg.reps = 1;
            cfg.ops_per_thread = 300;
            // set-growth grows from 1024 keys: 76 inserts, then 300 steady pairs per thread.
            const bool growth = w.kind == fb::pattern::set_growth;
            if (w.family == fb::op_family::keyed)
                cfg.keys = growth ? 1100 : 100;
            else
                cfg.initial_size = 100;
            if (growth) cfg.latency_every = 1;
            cfg.pool_dir = dir.path;
            const auto points = fb::run_bench(cfg);
            ASSERT_EQ(points.size(), 2u) << s.name << " " << w.name;
            for (const auto& p : points) {
                if (w.kind == fb::pattern::set_recovery) {
                    EXPECT_EQ(p.ops, 100u) << s.name << ": the keys found by the reopen";
                } else if (growth) {
                    EXPECT_EQ(p.ops, 76u) << s.name;
                    ASSERT_TRUE(p.steady_latency) << s.name;
                    EXPECT_EQ(p.steady_latency->samples, 300u * p.threads) << s.name;
                    EXPECT_EQ(p.latency->samples, 76u) << s.name;
                } else {
                    EXPECT_EQ(p.ops, 300u * p.threads) << s.name << " " << w.name;
                }
                EXPECT_GT(p.ops_per_sec.median, 0) << s.name << " " << w.name;
            }
            EXPECT_TRUE(fs::is_empty(dir.path)) << s.name << " left a pool file behind";
        }
        EXPECT_GT(runnable, 0) << s.name;
    }
}

TEST(BenchBaselines, PmdkFlushesAreNotCountedAsFerrites) {
    scratch_dir dir;
    fb::bench_config cfg;
    cfg.pool_dir = dir.path;
    cfg.ops_per_thread = 100;
    const auto* w = fb::find_workload("push-pop");
    const auto r = fb::measure(*fb::find_subject("stack-pmdk"), *w, 1, cfg, 0);
    EXPECT_FALSE(r.persistence_counted);
}

TEST(BenchBaselines, PoolInAMissingDirectoryFailsWithAnError) {
    fb::bench_config cfg;
    cfg.pool_dir = "/dev/shm/ferrite-bench-no-such-dir/deeper";
    cfg.ops_per_thread = 10;
    const auto* w = fb::find_workload("push-pop");
    EXPECT_THROW(fb::measure(*fb::find_subject("vector-pmdk"), *w, 1, cfg, 0), std::runtime_error);
}
