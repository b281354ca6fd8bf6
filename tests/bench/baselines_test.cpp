// tests/bench/baselines_test.cpp: the PMDK, map and set baselines (bench/baselines/) run every
// workload they support (of their family), single- and multi-threaded, through the real
// harness, and leave no pool file behind; every registered structure can run at least one
// workload; the map baselines are registered as keyed, map-mutex without scan; the set
// baselines (logfree-list, logfree-hash, pmdk-hash) are keyed, the log-free ones counted,
// and pmdk-hash's map agrees with a model, alone and under concurrent updates of shared keys
// (the log-free structures' own tests: logfree_test.cpp).
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/baselines/pmdk_hash.hpp"

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
                if (w.kind == fb::pattern::set_recovery || w.kind == fb::pattern::tree_recovery) {
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

TEST(BenchBaselines, RegistryListsTheSetBaselinesAsKeyed) {
    for (const char* n : {"logfree-list", "logfree-hash", "pmdk-hash"}) {
        const auto* s = fb::find_subject(n);
        ASSERT_NE(s, nullptr) << n;
        EXPECT_EQ(s->family, fb::op_family::keyed) << n;
        EXPECT_TRUE(fb::can_run(*s, *fb::find_workload("set-mix"))) << n;
        EXPECT_TRUE(fb::can_run(*s, *fb::find_workload("ycsb-c"))) << n;
        EXPECT_FALSE(fb::can_run(*s, *fb::find_workload("ycsb-e"))) << n;  // no scan
    }
    // Log-free sets have no upsert; the transactional map has.
    EXPECT_FALSE(fb::can_run(*fb::find_subject("logfree-hash"), *fb::find_workload("ycsb-a")));
    EXPECT_TRUE(fb::can_run(*fb::find_subject("pmdk-hash"), *fb::find_workload("ycsb-a")));
}

// The log-free baselines persist through ferrite/pmem: a set-mix with updates reports pwb and
// pfence per operation; PMDK's are not counted.
TEST(BenchBaselines, LogfreePersistenceIsCountedAndPmdkHashIsNot) {
    scratch_dir dir;
    fb::bench_config cfg;
    cfg.pool_dir = dir.path;
    cfg.ops_per_thread = 2000;
    cfg.keys = 256;
    cfg.reads_percent = 50;
    const auto* w = fb::find_workload("set-mix");
    for (const char* n : {"logfree-list", "logfree-hash"}) {
        const auto r = fb::measure(*fb::find_subject(n), *w, 2, cfg, 0);
        EXPECT_TRUE(r.persistence_counted) << n;
        EXPECT_GT(r.persistence.pwb_lines, 0u) << n;
        EXPECT_GT(r.persistence.pfences, 0u) << n;
    }
    EXPECT_FALSE(fb::measure(*fb::find_subject("pmdk-hash"), *w, 1, cfg, 0).persistence_counted);
    EXPECT_TRUE(fs::is_empty(dir.path));
}

TEST(BenchBaselines, PmdkHashAgreesWithAModel) {
    scratch_dir dir;
    ferrite::bench::pmdk::hash_map m(dir.path, 8, 1000);  // 8 buckets: long chains
    EXPECT_EQ(m.bucket_count(), 8u);
    m.prefill(300);
    std::map<std::uint64_t, std::uint64_t> model;
    for (std::uint64_t i = 0; i < 300; ++i) model[2 * i] = i;
    EXPECT_EQ(m.size(), 300u);
    std::mt19937_64 rng(3);
    for (int i = 0; i < 4000; ++i) {
        const std::uint64_t k = rng() % 800;
        const std::uint64_t v = rng();
        switch (rng() % 5) {
            case 0: ASSERT_EQ(m.insert(k, v), model.emplace(k, v).second) << "insert " << k; break;
            case 1: ASSERT_EQ(m.erase(k), model.erase(k) == 1) << "erase " << k; break;
            case 2: {
                const bool inserted = !model.contains(k);
                model[k] = v;
                ASSERT_EQ(m.put(k, v), inserted) << "put " << k;
                break;
            }
            case 3: ASSERT_EQ(m.contains(k), model.contains(k)) << "contains " << k; break;
            default: {
                const auto it = model.find(k);
                const auto got = m.get(k);
                ASSERT_EQ(got.has_value(), it != model.end()) << "get " << k;
                if (got) {
                    ASSERT_EQ(*got, it->second) << "get " << k;
                }
            }
        }
    }
    EXPECT_EQ(m.size(), model.size());
    for (const auto& [k, v] : model) ASSERT_EQ(m.get(k), v) << k;
}

// Threads insert and erase a few shared keys (4 buckets: shared stripes and chains): per key
// initial + successful inserts - successful erases is 0 or 1 and equals final membership.
TEST(BenchBaselines, PmdkHashConcurrentUpdatesAreExplainedByTheirCounts) {
    scratch_dir dir;
    ferrite::bench::pmdk::hash_map m(dir.path, 4, 1000);
    constexpr unsigned threads = 3;
    constexpr std::uint64_t keys = 16;
    m.prefill(keys / 2);
    std::vector<std::vector<std::int64_t>> delta(threads, std::vector<std::int64_t>(keys, 0));
    std::atomic<bool> go{false};
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t)
        ts.emplace_back([&, t] {
            std::mt19937_64 rng(t + 11);
            while (!go.load()) std::this_thread::yield();
            for (int i = 0; i < 1500; ++i) {
                const auto k = rng() % keys;
                switch (rng() % 3) {
                    case 0: delta[t][k] += m.insert(k, t); break;
                    case 1: delta[t][k] -= m.erase(k); break;
                    default: delta[t][k] += m.put(k, t); break;
                }
            }
        });
    go = true;
    for (auto& th : ts) th.join();
    std::uint64_t present = 0;
    for (std::uint64_t k = 0; k < keys; ++k) {
        std::int64_t n = k % 2 == 0 ? 1 : 0;
        for (unsigned t = 0; t < threads; ++t) n += delta[t][k];
        ASSERT_TRUE(n == 0 || n == 1) << "key " << k << ": " << n;
        EXPECT_EQ(m.contains(k), n == 1) << "key " << k;
        present += static_cast<std::uint64_t>(n);
    }
    EXPECT_EQ(m.size(), present);
}
