// bench/report.hpp: what `ferrite bench` prints: a table, JSON records, CSV rows.
//
// Every output is a list of records, one per (structure, workload, threads) point, each
// carrying the run's settings and the machine, so a record read alone (one CSV line, one
// JSON object) still says what it measured. JSON, schema "ferrite.bench/1" (docs/cli.md):
//   structure, workload, threads, reps, ops (per repetition, all threads), ops_per_thread
//   (null with --seconds), duration (requested seconds, null with --ops), seconds (median
//   timed region), ops_per_sec (median), ops_per_sec_min, ops_per_sec_max, pwb_per_op,
//   pfence_per_op, nt_stores_per_op (null where the structure's persistence is not counted
//   by ferrite, e.g. PMDK), batch_size, baseline, vs_baseline, oversubscribed (threads >
//   hardware threads), initial_size, ablation (the structure's: the run's --ablation, or
//   its own from a `name:ablation` entry), seed, machine {hardware_concurrency, cpu,
//   backend}, latency_sample_every (one operation in this many timed on average, 0: off),
//   latency_samples, latency_p50_ns, latency_p99_ns, latency_p999_ns (percentiles of the
//   sampled operations of all repetitions, harness.hpp; null when none was timed). Keyed
//   workloads add keys (= initial_size), distribution (uniform, zipfian; none for
//   ycsb-load, which draws no existing key) and, for set-mix, reads_percent.
// CSV has the same fields in csv_columns() order, machine fields flattened, unknown = empty.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/harness.hpp"

namespace ferrite::bench {

inline constexpr const char* bench_schema = "ferrite.bench/1";

struct machine_info {
    unsigned hardware_concurrency = 0;  // std::thread::hardware_concurrency()
    std::string cpu;                    // model name from /proc/cpuinfo ("" if unknown)
    std::string backend;                // ferrite persistence backend in use
};

machine_info this_machine();

// The settings every record repeats.
struct run_info {
    unsigned reps = 0;
    std::optional<std::uint64_t> ops_per_thread;  // --ops mode
    std::optional<double> duration;               // --seconds mode
    std::string ablation = "none";                // the run's (--ablation)
    std::uint64_t seed = 1;
    std::uint32_t latency_every = 0;              // --latency-every (0: latency not sampled)
    machine_info machine;
};

run_info describe_run(const bench_config& cfg, machine_info machine);

bool oversubscribed(const point_result& p, const machine_info& m) noexcept;

nlohmann::ordered_json record_json(const point_result& p, const run_info& run);
nlohmann::ordered_json records_json(const std::vector<point_result>& points, const run_info& run);

const std::vector<std::string>& csv_columns();
std::string records_csv(const std::vector<point_result>& points, const run_info& run);

// The terminal table: one block per workload, a row per (threads, structure).
std::string table_text(const std::vector<point_result>& points, const run_info& run);

}  // namespace ferrite::bench
