// tests/bench/fence_floor_test.cpp: the fence-floor calibration structures
// (bench/calibration/fence_floor.hpp) through the harness: each operation writes back exactly
// k lines and issues exactly one pfence, on every thread, and a run that lists fence-floor
// first reads every other structure against it (its own ratio is 1).
#include "bench/calibration/fence_floor.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "bench/harness.hpp"
#include "bench/registry.hpp"

namespace fb = ferrite::bench;

namespace {

fb::bench_config config(const char* structure, unsigned threads) {
    fb::bench_config c;
    c.structures = {*fb::find_subject(structure)};
    c.workloads = {fb::find_workload("push-pop")};
    c.threads = {threads};
    c.reps = 2;
    c.ops_per_thread = 1000;
    c.latency_every = 0;
    c.pool_dir = std::filesystem::temp_directory_path();
    return c;
}

}  // namespace

TEST(FenceFloor, RegisteredForOneTwoFourAndEightLines) {
    for (const char* name : {"fence-floor", "fence-floor-2", "fence-floor-4", "fence-floor-8"}) {
        const auto* s = fb::find_subject(name);
        ASSERT_NE(s, nullptr) << name;
        EXPECT_EQ(s->family, fb::op_family::sequence);
    }
    EXPECT_EQ(fb::find_subject("fence-floor-1"), nullptr);  // the 1-line one is plain fence-floor
    EXPECT_EQ(fb::find_subject("fence-floor-3"), nullptr);
}

TEST(FenceFloor, EachOperationWritesBackKLinesThenOneFence) {
    for (auto [name, k] : {std::pair{"fence-floor", 1u}, {"fence-floor-2", 2u}, {"fence-floor-4", 4u},
                           {"fence-floor-8", 8u}}) {
        for (unsigned threads : {1u, 3u}) {
            const auto cfg = config(name, threads);
            const auto r = fb::measure(cfg.structures[0], *cfg.workloads[0], threads, cfg, 0);
            EXPECT_EQ(r.ops, 1000u * threads) << name;
            EXPECT_EQ(r.persistence.pwb_lines, std::uint64_t{k} * r.ops) << name << " at " << threads;
            EXPECT_EQ(r.persistence.pfences, r.ops) << name << " at " << threads;
            EXPECT_EQ(r.persistence.nt_stores, 0u) << name;
            EXPECT_TRUE(r.persistence_counted);
            EXPECT_GT(r.ops_per_sec(), 0);
        }
    }
}

TEST(FenceFloor, ListedFirstItIsTheBaselineOfTheRun) {
    auto cfg = config("fence-floor", 1);
    cfg.structures.push_back(*fb::find_subject("fence-floor-8"));
    const auto points = fb::run_bench(cfg);
    ASSERT_EQ(points.size(), 2u);
    EXPECT_EQ(points[0].structure, "fence-floor");
    EXPECT_EQ(points[0].baseline, "fence-floor");
    EXPECT_DOUBLE_EQ(points[0].vs_baseline, 1.0);
    EXPECT_EQ(points[0].reps.size(), 2u);  // a median over repetitions, like every structure
    EXPECT_DOUBLE_EQ(points[0].pfence_per_op, 1.0);
    EXPECT_DOUBLE_EQ(points[1].pwb_per_op, 8.0);
    EXPECT_DOUBLE_EQ(points[1].pfence_per_op, 1.0);
    EXPECT_GT(points[1].vs_baseline, 0);
}
