// bench/harness.hpp: how `ferrite bench` measures one structure on one workload.
//
// One measurement = one fresh subject, `threads` workers, one timed region:
//   1. make() the subject (it fills itself to the initial size), start the workers;
//   2. each worker attach()es, reads its persistence counters (ferrite/pmem/counters.hpp)
//      and waits on the start barrier;
//   3. the harness reads steady_clock and releases the barrier: the timed region starts;
//   4. each worker runs its operation stream (workloads.hpp), either a fixed number of
//      operations, or until the harness raises a stop flag after a fixed duration (checked
//      every 64 operations), then reads the clock and its counters again and detach()es;
//   5. the timed region ends when the last worker ends.
// Throughput = operations of all workers / timed region. Persistence instructions per
// operation = summed counter differences / operations. A point (structure, workload,
// threads) repeats the measurement `reps` times with a fresh subject each time and reports
// the median throughput with min and max; the repetitions of a workload's points interleave
// (rep 1 of every thread count and structure, then rep 2...), so a slow phase of the
// machine hits them alike (on this project's shared 2-vCPU VM the same configuration runs
// at 1.0 or 1.9 Mops/s depending on when: phases last seconds); within a thread count the
// structures run in the listed order in even repetitions and in the reverse order in odd
// ones (ABBA), so that a load that grows or falls over a run does not favour the one
// listed first.
// The first structure listed is the baseline: every point also carries its throughput ratio
// to the baseline's at the same workload and thread count (the ratio of the two medians), and
// the median of its per-repetition ratios (repetition r over the baseline's repetition r,
// which ran right before or after it): a slow phase of the machine that lands on one
// repetition of one structure moves a median by a repetition, and that repetition's pair
// ratio only.
//
// Latency is sampled: a worker times one operation in every `latency_every` on average
// (steady_clock around the subject's run(), so drawing the operation is not in it) and
// records it in its own latency_histogram, merged at the end of the measurement and over a
// point's repetitions. The gap to the next timed operation is drawn uniformly from
// [1, 2 * latency_every - 1] rather than fixed, so that a workload with a period (push-pop
// alternates two operations) is not sampled on one operation only. The untimed operations
// pay a decrement and a predictable branch; a timed one costs two clock reads (~25 ns each
// on this project's VM) and the record. The default, 1 in 256, keeps that under ~1 % of
// the fastest volatile operation (~30 ns); docs/results.md measures it. The recorded time
// includes one clock read. latency_every = 0 switches timing off (the same loop, never
// reaching a sample).
//
// Two durable-set workloads measure something else than a stream (workloads.hpp):
//   set-recovery  one measurement = make the subject with N keys, close_for_reopen()
//                 (untimed), glibc's mmap threshold back to its initial 128 KiB and the
//                 freed memory back to the kernel (the open allocates and faults its
//                 buffers in as a restarted process would), then time
//                 reopen(threads) on the harness's thread: `threads`
//                 is the number of recovery threads, ops = keys the reopened structure
//                 holds (it must be N: anything else fails the measurement), seconds = the
//                 open, ops/s = keys recovered per second. The recovery threads are the
//                 structure's, so their persistence instructions are not counted (n/a).
//   tree-recovery as set-recovery, but the timed region also holds the first lookup after
//                 the reopen (lookup_after_reopen of a prefilled key, which must be found),
//                 `threads` = load threads; then, untimed, visit() must list each prefilled
//                 key exactly once and nothing else: ops = keys found.
//   set-growth    the subject starts with min(growth_start_keys, N) keys; the timed region
//                 is the workers' inserts of the N - start new keys (shared out evenly);
//                 throughput, persistence and latency are those of the growth. After a
//                 barrier each worker runs ops_per_thread steady pairs (erase its oldest
//                 own key, insert a new one), whose insert latencies, sampled the same way,
//                 are the point's steady_latency. Both run a fixed amount of work: no
//                 --seconds.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/latency_histogram.hpp"
#include "bench/stats.hpp"
#include "bench/subject.hpp"
#include "bench/workloads.hpp"
#include "ferrite/pmem/counters.hpp"

namespace ferrite::bench {

inline constexpr unsigned default_threads[] = {1, 2, 4, 8, 16, 32, 64};
inline constexpr unsigned default_reps = 5;
inline constexpr std::uint64_t default_ops_per_thread = 200000;
inline constexpr unsigned max_threads = 4096;
inline constexpr std::uint32_t default_latency_every = 256;

// One structure of a run: its kind and, where the --structure entry named one after a
// colon (`dfc-stack:no-elimination`), an ablation of its own instead of the run's. Entries
// of one kind with different ablations compare them inside one interleaved run.
struct measured_structure {
    measured_structure(const subject_kind& k) : kind(&k) {}  // implicit: a kind alone is an entry
    measured_structure(const subject_kind& k, subject_options own) : kind(&k), own_options(own) {}
    const subject_kind* kind;
    std::optional<subject_options> own_options;  // nullopt: bench_config::options
    // What its records are called: the kind's name, with ":ablation" when it has its own.
    std::string label() const;
};

struct bench_config {
    std::vector<measured_structure> structures;  // the first is the baseline of the ratios
    std::vector<const workload*> workloads;
    std::vector<unsigned> threads{std::begin(default_threads), std::end(default_threads)};
    unsigned reps = default_reps;
    std::uint64_t ops_per_thread = default_ops_per_thread;
    std::optional<double> seconds;              // fixed duration instead of fixed operations
    std::optional<std::uint64_t> initial_size;  // sequence workloads; default: the workload's
    std::optional<std::uint64_t> keys;          // keyed workloads' prefill; default: the workload's
    std::optional<unsigned> reads_percent;      // set-mix; default default_reads_percent
    std::optional<key_distribution> distribution;  // keyed workloads; default: the workload's
    subject_options options;         // every structure's, but for those with their own
    std::filesystem::path pool_dir;  // empty: the ferrite pool directory
    std::uint64_t seed = 1;          // repetition r of thread t draws from seed + r, t
    std::uint32_t latency_every = default_latency_every;  // time 1 op in this many; 0: none
    // Called before each measurement: what runs next, measurements done, measurements in all.
    std::function<void(const std::string& label, std::uint64_t done, std::uint64_t total)> on_progress;

    const subject_options& options_for(const measured_structure& s) const noexcept {
        return s.own_options ? *s.own_options : options;
    }
};

struct rep_result {
    std::uint64_t ops = 0;  // all workers
    double seconds = 0;     // timed region
    pmem::counters persistence;  // the record's total over the region; else the workers' counters
    double batch_size = 0;       // the record's mean batch size over the region; else 0
    bool persistence_counted = true;
    std::optional<pmem::counters> combiner;  // the record's combiner part over the region (DFC)
    latency_histogram latency;               // sampled operations of every worker (ns)
    std::optional<latency_histogram> steady_latency;  // set-growth: the steady phase's inserts

    double ops_per_sec() const noexcept { return seconds > 0 ? static_cast<double>(ops) / seconds : 0; }
};

// Percentiles of the sampled operation latencies of a point, over all its repetitions.
struct latency_summary {
    std::uint64_t samples = 0;
    std::uint64_t p50_ns = 0;
    std::uint64_t p99_ns = 0;
    std::uint64_t p999_ns = 0;
};

// One (structure, workload, threads) point over all repetitions.
struct point_result {
    std::string structure;        // measured_structure::label()
    std::string ablation = "none";
    std::string workload;
    unsigned threads = 0;
    std::uint64_t initial_size = 0;
    std::vector<rep_result> reps;
    spread ops_per_sec;           // over repetitions
    std::uint64_t ops = 0;        // operations per repetition (mean, rounded)
    double seconds = 0;           // timed region per repetition (median)
    bool persistence_counted = true;
    double pwb_per_op = 0;        // summed over repetitions, then divided
    double pfence_per_op = 0;
    double nt_stores_per_op = 0;
    double batch_size = 0;        // mean over repetitions
    std::optional<double> combiner_pwb_per_op;     // when every repetition reported them
    std::optional<double> combiner_pfence_per_op;
    std::optional<latency_summary> latency;  // nullopt: no operation was timed
    std::optional<latency_summary> steady_latency;  // set-growth: steady-state inserts
    pattern kind = pattern::push_pop;        // the workload's
    op_family family = op_family::sequence;  // the workload's
    std::string distribution;                // keyed workloads: uniform or zipfian
    std::optional<unsigned> reads_percent;   // set-mix
    std::string baseline;         // name of the first structure
    double vs_baseline = 0;       // median ops/s / baseline's median ops/s (0 if it has none)
    double vs_baseline_paired = 0;  // median over r of rep r's ops/s / the baseline's rep r's (0: none)
};

// Throws ferrite::usage_error if the configuration cannot run: nothing to run, a zero
// thread count / reps / ops / duration, a structure of the other family than a workload
// (sequence vs keyed) or lacking one of its operations (or, for set-recovery and
// tree-recovery, unable to reopen), an option that no workload of the run uses (--keys,
// --distribution without a keyed workload, --reads without set-mix, --initial-size without a
// sequence workload), reads above 100 %, --seconds with set-recovery, tree-recovery or
// set-growth.
void validate(const bench_config& cfg);

// The initial size a workload runs with under this configuration (keyed: the keys).
std::uint64_t initial_size_for(const bench_config& cfg, const workload& w);
// What a keyed workload's streams draw under this configuration.
key_options key_options_for(const bench_config& cfg, const workload& w);
// Keyed: the most distinct keys a structure may hold at once in one measurement of w with
// `threads` workers (subject_config::capacity_hint); 0 where unbounded (--seconds with a
// workload that inserts new keys).
std::uint64_t capacity_hint_for(const bench_config& cfg, const workload& w, unsigned threads);

// One measurement (a fresh subject). Rethrows the first exception of a worker.
rep_result measure(const measured_structure& entry, const workload& w, unsigned threads,
                   const bench_config& cfg, unsigned rep);

// Summary of one point's repetitions (ablation and ratios are filled in by run_bench).
point_result summarize_point(const measured_structure& s, const workload& w, unsigned threads,
                             std::uint64_t initial_size, std::vector<rep_result> reps);

// Every point: for each workload, for each thread count, every structure in order.
std::vector<point_result> run_bench(const bench_config& cfg);

// --ablation names: none, no-nt, no-futex, no-nt-no-futex, no-elimination, no-tid-claims, two-fence,
// no-sticky, two-fence-no-sticky.
std::optional<subject_options> ablation_from_string(std::string_view name) noexcept;
std::string ablation_name(const subject_options& o);

}  // namespace ferrite::bench
