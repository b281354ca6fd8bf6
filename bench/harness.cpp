// bench/harness.cpp: measurement of one point and of a whole run (see harness.hpp).
#include "bench/harness.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <new>
#include <thread>

#include <malloc.h>

#include "ferrite/error.hpp"

namespace ferrite::bench {
namespace {

// A worker's attach(tid): true, or false with the failure recorded (the worker still takes
// its place in the start gate, so nobody waits for it forever, and runs no operation).
bool attach_worker(subject& s, unsigned tid, std::exception_ptr& failure) {
    try {
        s.attach(tid);
        return true;
    } catch (...) {
        failure = std::current_exception();
        return false;
    }
}

using clock = std::chrono::steady_clock;
constexpr std::uint64_t stop_check_every = 64;

// One worker's results, on its own cache lines (workers write them at the end only, but
// neighbours' slots must not share a line with a worker still running).
struct alignas(64) worker_slot {
    std::uint64_t ops = 0;
    pmem::counters persistence;
    clock::time_point end{};
    std::exception_ptr failure;
    latency_histogram latency;
};

// Gaps between timed operations: uniform in [1, 2 * every - 1] (mean `every`), from a
// xorshift64 of the worker's own; every = 0 gives a gap no run reaches.
class sample_gaps {
public:
    sample_gaps(std::uint32_t every, unsigned tid, std::uint64_t seed) noexcept
        : span_(every == 0 ? 0 : 2 * std::uint64_t{every} - 1),
          state_((seed + 1) * 0xd1b54a32d192ed03ULL ^ (std::uint64_t{tid} + 1) * 0x9e3779b97f4a7c15ULL) {
        if (state_ == 0) state_ = 1;
    }
    std::uint64_t next() noexcept {
        if (span_ == 0) return ~std::uint64_t{0};
        state_ ^= state_ << 13;
        state_ ^= state_ >> 7;
        state_ ^= state_ << 17;
        return 1 + state_ % span_;
    }

private:
    std::uint64_t span_;
    std::uint64_t state_;
};

// A worker's operations from its stream, every one in about `latency_every` timed into the
// histogram the caller names (the main loop's and set-growth's phases share it).
class sampled_ops {
public:
    sampled_ops(subject& subj, unsigned tid, op_stream& stream, std::uint32_t every, std::uint64_t seed) noexcept
        : subj_(subj), tid_(tid), stream_(stream), gaps_(every, tid, seed), until_sample_(gaps_.next()) {}
    void run_next(latency_histogram& into) {
        const auto s = stream_.next();
        if (--until_sample_ != 0) [[likely]] {
            subj_.run(tid_, s.o, s.a, s.b);
            return;
        }
        until_sample_ = gaps_.next();
        const auto t0 = clock::now();
        subj_.run(tid_, s.o, s.a, s.b);
        const auto t1 = clock::now();
        into.record(static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()));
    }

private:
    subject& subj_;
    unsigned tid_;
    op_stream& stream_;
    sample_gaps gaps_;
    std::uint64_t until_sample_;
};

// Starts `threads` workers together: each calls arrived() once set up (false: a worker could
// not be started, run nothing); spawn() returns when every worker has arrived (a failed spawn
// cancels, releases and joins the others, then rethrows); release() lets them go.
class start_gate {
public:
    bool arrived() {
        ready_.fetch_add(1, std::memory_order_acq_rel);
        ready_.notify_all();
        go_.wait(false, std::memory_order_acquire);
        return !cancelled_.load(std::memory_order_acquire);
    }
    template <class Body>
    std::vector<std::thread> spawn(unsigned threads, Body& body) {
        std::vector<std::thread> workers;
        workers.reserve(threads);
        try {
            for (unsigned t = 0; t < threads; ++t) workers.emplace_back(body, t);
        } catch (...) {
            cancelled_.store(true, std::memory_order_release);
            release();
            for (auto& th : workers) th.join();
            throw;
        }
        for (unsigned r; (r = ready_.load(std::memory_order_acquire)) < threads;)
            ready_.wait(r, std::memory_order_acquire);
        return workers;
    }
    void release() {
        go_.store(true, std::memory_order_release);
        go_.notify_all();
    }

private:
    std::atomic<unsigned> ready_{0};
    std::atomic<bool> go_{false};
    std::atomic<bool> cancelled_{false};
};

std::string op_list(const std::vector<op>& ops) {
    std::string s;
    for (op o : ops) {
        if (!s.empty()) s += ", ";
        s += to_string(o);
    }
    return s;
}

}  // namespace

void validate(const bench_config& cfg) {
    if (cfg.structures.empty()) throw usage_error("name at least one structure (see `ferrite bench --list`)");
    if (cfg.workloads.empty()) throw usage_error("name a workload (see `ferrite bench --list`)");
    if (cfg.threads.empty()) throw usage_error("--threads needs at least one thread count");
    for (unsigned t : cfg.threads)
        if (t == 0 || t > max_threads)
            throw usage_error("thread counts must be between 1 and " + std::to_string(max_threads) +
                              ", not " + std::to_string(t));
    if (cfg.reps == 0) throw usage_error("--reps must be at least 1");
    if (cfg.seconds) {
        if (!(*cfg.seconds > 0) || !std::isfinite(*cfg.seconds))
            throw usage_error("--seconds must be a positive number");
    } else if (cfg.ops_per_thread == 0) {
        throw usage_error("--ops must be at least 1");
    }
    bool keyed = false, sequence = false, set_mix = false;
    for (const auto* w : cfg.workloads) {
        keyed = keyed || w->family == op_family::keyed;
        sequence = sequence || w->family == op_family::sequence;
        set_mix = set_mix || w->kind == pattern::set_mix;
        if (cfg.seconds && (w->kind == pattern::set_recovery || w->kind == pattern::set_growth ||
                            w->kind == pattern::tree_recovery))
            throw usage_error("--seconds: workload '" + w->name + "' runs a fixed amount of work (--keys" +
                              (w->kind == pattern::set_growth ? ", then --ops steady pairs" : "") + "), not a duration");
    }
    if (cfg.keys && !keyed)
        throw usage_error("--keys sets the prefill of keyed workloads (set-mix, ycsb-*); sequence workloads take "
                          "--initial-size");
    if (cfg.distribution && !keyed)
        throw usage_error("--distribution applies to keyed workloads (set-mix, ycsb-*) only");
    if (cfg.initial_size && !sequence)
        throw usage_error("--initial-size applies to sequence workloads; keyed workloads are prefilled with --keys");
    if (cfg.reads_percent && !set_mix) throw usage_error("--reads applies to the set-mix workload only");
    if (cfg.reads_percent && *cfg.reads_percent > 100)
        throw usage_error("--reads is a percentage: 0 to 100, not " + std::to_string(*cfg.reads_percent));
    for (const auto& s : cfg.structures)
        for (const auto* w : cfg.workloads) {
            if (s.kind->family != w->family)
                throw usage_error("structure '" + s.kind->name + "' is a " + std::string(to_string(s.kind->family)) +
                                  " structure and cannot run the " + std::string(to_string(w->family)) +
                                  " workload '" + w->name + "' (`ferrite bench --list` shows which are which)");
            std::vector<op> missing;
            if (!can_run(s.kind->supports, *w, &missing))
                throw usage_error("structure '" + s.kind->name + "' cannot run workload '" + w->name +
                                  "': it lacks " + op_list(missing) + " (it supports " +
                                  op_list(s.kind->supports) + ")");
            if (w->needs_reopen && !s.kind->reopens)
                throw usage_error("structure '" + s.kind->name + "' cannot run workload '" + w->name +
                                  "': it cannot be closed and reopened from a pool (only the durable sets and the "
                                  "CpNvm trees can)");
        }
}

std::uint64_t initial_size_for(const bench_config& cfg, const workload& w) {
    if (w.family == op_family::keyed) return cfg.keys.value_or(w.initial_size);
    return cfg.initial_size.value_or(w.initial_size);
}

key_options key_options_for(const bench_config& cfg, const workload& w) {
    return {cfg.distribution.value_or(w.distribution), cfg.reads_percent.value_or(default_reads_percent)};
}

std::uint64_t capacity_hint_for(const bench_config& cfg, const workload& w, unsigned threads) {
    if (w.family != op_family::keyed) return 0;
    const std::uint64_t n = initial_size_for(cfg, w);
    switch (w.kind) {
    case pattern::set_mix: return 2 * n;  // every key of [0, 2N)
    case pattern::ycsb_load:
    case pattern::ycsb_e:  // new keys: one per insert
        return cfg.seconds ? 0 : n + std::uint64_t{threads} * cfg.ops_per_thread;
    case pattern::set_growth: return std::max(n, growth_start_keys) + threads;  // the steady pairs keep N
    default: return n;  // updates and reads of present keys, set-recovery
    }
}

std::string measured_structure::label() const {
    return own_options ? kind->name + ":" + ablation_name(*own_options) : kind->name;
}

void subject::close_for_reopen() { throw usage_error("this structure cannot be closed and reopened"); }
std::uint64_t subject::reopen(unsigned) { throw usage_error("this structure cannot be closed and reopened"); }
std::optional<std::uint64_t> subject::lookup_after_reopen(std::uint64_t) {
    throw usage_error("this structure cannot be looked up after a reopen");
}

namespace {

std::unique_ptr<subject> make_subject(const measured_structure& entry, const workload& w, unsigned threads,
                                      const bench_config& cfg, std::uint64_t initial) {
    subject_config sc{threads, initial, cfg.pool_dir, cfg.options_for(entry)};
    sc.capacity_hint = capacity_hint_for(cfg, w, threads);
    auto subj = entry.kind->make(sc);
    if (!subj) throw error("structure '" + entry.label() + "' could not be created");
    return subj;
}

// set-recovery: one timed reopen on this thread (harness.hpp); tree-recovery: the reopen and
// the first lookup timed, every key checked after.
rep_result measure_recovery(const measured_structure& entry, const workload& w, unsigned threads,
                            const bench_config& cfg) {
    const std::uint64_t keys = initial_size_for(cfg, w);
    const auto subj = make_subject(entry, w, threads, cfg, keys);
    subj->close_for_reopen();
    // The open is timed as a restarted process would run it. A fresh process has no freed
    // memory at hand, and glibc serves every allocation of 128 KiB and more (its initial mmap
    // threshold) with fresh pages that fault in. Here the teardown has just freed buffers of
    // the same sizes and raised glibc's threshold (up to 32 MiB), so a small table's open
    // would get its buffers back from the heap without a fault while a large table's come
    // fresh: the harness read 4M/1M as 5.0-7.6x where restarts read 3.8-4.2x. So: the
    // threshold back to its initial value (fixed from here on, for this process) and the
    // freed pages back to the kernel.
    (void)::mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    (void)::malloc_trim(0);
    const auto start = clock::now();
    const auto found = subj->reopen(threads);
    if (w.kind == pattern::tree_recovery) {
        // The first completed lookup ends the timed region; then every key is checked: each
        // prefilled key exactly once, nothing else (a keyed subject's prefill values are
        // its own).
        const std::uint64_t probe = prefill_key(keys / 2);
        const auto v = keys == 0 ? std::optional<std::uint64_t>{0} : subj->lookup_after_reopen(probe);
        const auto end = clock::now();
        if (!v)
            throw error("structure '" + entry.label() + "': the first lookup after the reopen did not find key " +
                        std::to_string(probe));
        std::vector<bool> seen(keys);
        std::uint64_t listed = 0, wrong = 0;
        const bool visited = subj->visit([&](std::uint64_t k, std::uint64_t) {
            ++listed;
            if (k % 2 != 0 || k / 2 >= keys || seen[k / 2]) {
                ++wrong;
                return;
            }
            seen[k / 2] = true;
        });
        if (!visited) throw error("structure '" + entry.label() + "' cannot list its keys after a reopen");
        if (listed != keys || wrong != 0)
            throw error("structure '" + entry.label() + "' reopened with " + std::to_string(listed) + " keys (" +
                        std::to_string(wrong) + " not among the keys it was filled with, or repeated), not the " +
                        std::to_string(keys) + " it was closed with");
        rep_result r;
        r.ops = listed;
        r.seconds = std::chrono::duration<double>(end - start).count();
        r.persistence_counted = false;  // the load threads are the structure's
        return r;
    }
    const auto end = clock::now();
    if (found != keys)
        throw error("structure '" + entry.label() + "' reopened with " + std::to_string(found) + " keys, not the " +
                    std::to_string(keys) + " it was closed with");
    rep_result r;
    r.ops = found;
    r.seconds = std::chrono::duration<double>(end - start).count();
    r.persistence_counted = false;  // the recovery threads are the structure's
    return r;
}

// set-growth: inserts from min(growth_start_keys, N) keys to N (timed), a barrier, then the
// steady erase+insert pairs at N (harness.hpp).
rep_result measure_growth(const measured_structure& entry, const workload& w, unsigned threads,
                          const bench_config& cfg, unsigned rep) {
    const std::uint64_t target = initial_size_for(cfg, w);
    const std::uint64_t start_keys = std::min(growth_start_keys, target);
    const auto subj = make_subject(entry, w, threads, cfg, start_keys);
    const std::uint64_t to_insert = target - start_keys;

    struct alignas(64) growth_slot {
        worker_slot growth;
        latency_histogram steady;
        std::exception_ptr steady_failure;
    };
    std::vector<growth_slot> slots(threads);
    start_gate gate;
    std::atomic<unsigned> grown{0};  // workers past the growth phase

    auto body = [&](unsigned tid) {
        auto& slot = slots[tid];
        const bool attached = attach_worker(*subj, tid, slot.growth.failure);
        op_stream stream(w, tid, cfg.seed + rep, start_keys, key_options_for(cfg, w));
        sampled_ops inserts(*subj, tid, stream, cfg.latency_every, cfg.seed + rep);  // this thread's new keys
        const std::uint64_t share = to_insert / threads + (tid < to_insert % threads ? 1 : 0);
        const auto before = pmem::thread_counters();
        if (!gate.arrived()) return;
        std::uint64_t n = 0;
        if (attached) {
            try {
                for (; n < share; ++n) inserts.run_next(slot.growth.latency);
            } catch (...) {
                slot.growth.failure = std::current_exception();
            }
        }
        slot.growth.end = clock::now();
        slot.growth.persistence = pmem::thread_counters() - before;
        slot.growth.ops = n;
        // Every worker's growth ends before any steady pair: the table is at N. A worker
        // that failed still arrives (nobody waits forever) and runs no pair.
        if (attached) subj->pause(tid);
        grown.fetch_add(1, std::memory_order_acq_rel);
        grown.notify_all();
        for (unsigned g; (g = grown.load(std::memory_order_acquire)) < threads;)
            grown.wait(g, std::memory_order_acquire);
        if (attached) subj->resume(tid);
        if (attached && !slot.growth.failure) {
            try {
                for (std::uint64_t j = 0; j < cfg.ops_per_thread; ++j) {
                    subj->run(tid, op::erase, new_key_of(tid, j), 0);  // the oldest of its own keys
                    inserts.run_next(slot.steady);
                }
            } catch (...) {
                slot.steady_failure = std::current_exception();
            }
        }
        if (!attached) return;
        try {
            subj->detach(tid);
        } catch (...) {
            if (!slot.steady_failure) slot.steady_failure = std::current_exception();
        }
    };

    auto workers = gate.spawn(threads, body);
    const auto start = clock::now();
    gate.release();
    for (auto& th : workers) th.join();

    rep_result r;
    r.steady_latency.emplace();
    auto end = start;
    for (const auto& s : slots) {
        if (s.growth.failure) std::rethrow_exception(s.growth.failure);
        if (s.steady_failure) std::rethrow_exception(s.steady_failure);
        r.ops += s.growth.ops;
        r.persistence += s.growth.persistence;
        r.latency.merge(s.growth.latency);
        r.steady_latency->merge(s.steady);
        end = std::max(end, s.growth.end);
    }
    r.seconds = std::chrono::duration<double>(end - start).count();
    r.persistence_counted = subj->persistence_counted();
    return r;
}

}  // namespace

rep_result measure(const measured_structure& entry, const workload& w, unsigned threads,
                   const bench_config& cfg, unsigned rep) {
    if (w.kind == pattern::set_recovery || w.kind == pattern::tree_recovery)
        return measure_recovery(entry, w, threads, cfg);
    if (w.kind == pattern::set_growth) return measure_growth(entry, w, threads, cfg, rep);
    const std::uint64_t initial = initial_size_for(cfg, w);
    const auto subj = make_subject(entry, w, threads, cfg, initial);

    std::vector<worker_slot> slots(threads);
    start_gate gate;
    std::atomic<bool> stop{false};
    const bool timed = cfg.seconds.has_value();

    auto body = [&](unsigned tid) {
        auto& slot = slots[tid];
        const bool attached = attach_worker(*subj, tid, slot.failure);
        op_stream stream(w, tid, cfg.seed + rep, initial, key_options_for(cfg, w));
        sampled_ops ops(*subj, tid, stream, cfg.latency_every, cfg.seed + rep);
        auto one_op = [&] { ops.run_next(slot.latency); };
        const auto before = pmem::thread_counters();
        if (!gate.arrived() || !attached) return;
        std::uint64_t n = 0;
        try {
            if (!timed) {
                for (; n < cfg.ops_per_thread; ++n) one_op();
            } else {
                while (!stop.load(std::memory_order_relaxed)) {
                    for (std::uint64_t k = 0; k < stop_check_every; ++k, ++n) one_op();
                }
            }
        } catch (...) {
            slot.failure = std::current_exception();
        }
        slot.end = clock::now();
        slot.persistence = pmem::thread_counters() - before;
        slot.ops = n;
        try {
            subj->detach(tid);
        } catch (...) {
            if (!slot.failure) slot.failure = std::current_exception();
        }
    };

    auto workers = gate.spawn(threads, body);
    const auto stats_before = subj->combining_stats();
    const auto start = clock::now();
    gate.release();
    if (timed) {
        std::this_thread::sleep_until(start + std::chrono::duration<double>(*cfg.seconds));
        stop.store(true, std::memory_order_relaxed);
    }
    for (auto& th : workers) th.join();

    rep_result r;
    auto end = start;
    for (const auto& s : slots) {
        if (s.failure) std::rethrow_exception(s.failure);
        r.ops += s.ops;
        r.persistence += s.persistence;
        r.latency.merge(s.latency);
        end = std::max(end, s.end);
    }
    r.seconds = std::chrono::duration<double>(end - start).count();
    r.persistence_counted = subj->persistence_counted();
    if (const auto after = subj->combining_stats(); after && stats_before) {
        // A combining subject: persistence and batch size from its engine's record.
        const auto region = *after - *stats_before;
        r.persistence = region.total;
        r.batch_size = region.mean_batch_size();
        if (subj->reports_combiner_persistence()) r.combiner = region.combiner;
    }
    return r;
}

point_result summarize_point(const measured_structure& s, const workload& w, unsigned threads,
                             std::uint64_t initial_size, std::vector<rep_result> reps) {
    point_result p;
    p.structure = s.label();
    p.workload = w.name;
    p.threads = threads;
    p.initial_size = initial_size;
    std::vector<double> rates, secs;
    std::uint64_t ops = 0;
    pmem::counters c;
    double batch = 0;
    std::optional<pmem::counters> combiner = pmem::counters{};
    latency_histogram latency;
    std::optional<latency_histogram> steady;
    for (const auto& r : reps) {
        latency.merge(r.latency);
        if (r.steady_latency) {
            if (!steady) steady.emplace();
            steady->merge(*r.steady_latency);
        }
        if (combiner && r.combiner)
            *combiner += *r.combiner;
        else
            combiner.reset();
        rates.push_back(r.ops_per_sec());
        secs.push_back(r.seconds);
        ops += r.ops;
        c += r.persistence;
        batch += r.batch_size;
        p.persistence_counted = p.persistence_counted && r.persistence_counted;
    }
    if (latency.count() > 0)
        p.latency = latency_summary{latency.count(), latency.value_at_percentile(50),
                                    latency.value_at_percentile(99), latency.value_at_percentile(99.9)};
    if (steady && steady->count() > 0)
        p.steady_latency = latency_summary{steady->count(), steady->value_at_percentile(50),
                                           steady->value_at_percentile(99), steady->value_at_percentile(99.9)};
    p.ops_per_sec = summarize(rates);
    p.seconds = summarize(secs).median;
    if (!reps.empty()) {
        const auto n = static_cast<double>(reps.size());
        p.ops = static_cast<std::uint64_t>(std::llround(static_cast<double>(ops) / n));
        p.batch_size = batch / n;
    }
    if (ops > 0) {
        const auto total = static_cast<double>(ops);
        p.pwb_per_op = static_cast<double>(c.pwb_lines) / total;
        p.pfence_per_op = static_cast<double>(c.pfences) / total;
        p.nt_stores_per_op = static_cast<double>(c.nt_stores) / total;
        if (combiner && !reps.empty()) {
            p.combiner_pwb_per_op = static_cast<double>(combiner->pwb_lines) / total;
            p.combiner_pfence_per_op = static_cast<double>(combiner->pfences) / total;
        }
    }
    p.reps = std::move(reps);
    return p;
}

std::vector<point_result> run_bench(const bench_config& cfg) {
    validate(cfg);
    const auto n_structures = cfg.structures.size();
    const std::uint64_t total = cfg.workloads.size() * cfg.threads.size() * cfg.reps * n_structures;
    std::uint64_t done = 0;
    std::vector<point_result> out;
    for (const auto* w : cfg.workloads) {
        const auto initial = initial_size_for(cfg, *w);
        // reps[thread count][structure]: repetition r of every point before repetition r + 1
        // of any, so that a slow phase of the machine (seconds long on a shared VM) lands on
        // every point alike instead of on a whole thread count; the structures of a thread
        // count in the listed order in even repetitions, reversed in odd ones (ABBA: a load
        // that drifts over the run lands on the first and the last alike).
        std::vector<std::vector<std::vector<rep_result>>> reps(
            cfg.threads.size(), std::vector<std::vector<rep_result>>(n_structures));
        for (unsigned rep = 0; rep < cfg.reps; ++rep)
            for (std::size_t ti = 0; ti < cfg.threads.size(); ++ti)
                for (std::size_t k = 0; k < n_structures; ++k) {
                    const std::size_t s = rep % 2 == 0 ? k : n_structures - 1 - k;
                    const unsigned t = cfg.threads[ti];
                    if (cfg.on_progress)
                        cfg.on_progress(cfg.structures[s].label() + " " + w->name + " " + std::to_string(t) + "t",
                                        done, total);
                    reps[ti][s].push_back(measure(cfg.structures[s], *w, t, cfg, rep));
                    ++done;
                }
        for (std::size_t ti = 0; ti < cfg.threads.size(); ++ti) {
            const unsigned t = cfg.threads[ti];
            const auto first = out.size();
            for (std::size_t s = 0; s < n_structures; ++s) {
                out.push_back(summarize_point(cfg.structures[s], *w, t, initial, std::move(reps[ti][s])));
                auto& p = out.back();
                p.ablation = ablation_name(cfg.options_for(cfg.structures[s]));
                p.family = w->family;
                p.kind = w->kind;
                if (w->family == op_family::keyed) {
                    const auto k = key_options_for(cfg, *w);
                    // ycsb-load, set-growth and set-recovery draw no existing key.
                    const bool draws = w->kind != pattern::ycsb_load && w->kind != pattern::set_growth &&
                                       w->kind != pattern::set_recovery && w->kind != pattern::tree_recovery;
                    p.distribution = !draws
                                         ? "none"
                                         : std::string(to_string(k.distribution.value_or(w->distribution)));
                    if (w->kind == pattern::set_mix) p.reads_percent = k.reads_percent;
                }
            }
            const double base = out[first].ops_per_sec.median;
            for (std::size_t i = first; i < out.size(); ++i) {
                out[i].baseline = out[first].structure;
                out[i].vs_baseline = base > 0 ? out[i].ops_per_sec.median / base : 0;
                // Repetition r of every structure ran back to back (ABBA order, above).
                std::vector<double> pairs;
                for (std::size_t r = 0; r < out[i].reps.size() && r < out[first].reps.size(); ++r)
                    if (const double b = out[first].reps[r].ops_per_sec(); b > 0)
                        pairs.push_back(out[i].reps[r].ops_per_sec() / b);
                out[i].vs_baseline_paired = pairs.empty() ? 0 : summarize(pairs).median;
            }
        }
    }
    if (cfg.on_progress) cfg.on_progress("done", done, total);
    return out;
}

std::optional<subject_options> ablation_from_string(std::string_view name) noexcept {
    subject_options o;
    if (name == "none") return o;
    if (name == "no-nt") {
        o.nt_stores = false;
        return o;
    }
    if (name == "no-futex") {
        o.futex_wait = false;
        return o;
    }
    if (name == "no-elimination") {  // combining structures that eliminate (DFC stack/deque)
        o.elimination = false;
        return o;
    }
    if (name == "no-tid-claims") {  // DFC structures: thread ids not claimed (the check's cost)
        o.tid_claims = false;
        return o;
    }
    if (name == "two-fence") {  // PFC vector/stack/queue/deque: pushes ordered by a fence of their own (format 1's protocol)
        o.one_fence = false;
        return o;
    }
    if (name == "no-sticky") {  // PFC stack/queue/deque: no sticky combiner (the engine before issue 23)
        o.sticky = false;
        return o;
    }
    if (name == "two-fence-no-sticky") {  // PFC stack/queue/deque as before issue 23: protocol and engine
        o.one_fence = false;
        o.sticky = false;
        return o;
    }
    if (name == "grown") {  // split-ordered hash sets: no expected_size, the buckets grown by the prefill
        o.presized = false;
        return o;
    }
    if (name == "no-nt-no-futex") {
        o.nt_stores = false;
        o.futex_wait = false;
        return o;
    }
    return std::nullopt;
}

std::string ablation_name(const subject_options& o) {
    std::string s;
    if (!o.nt_stores) s += "no-nt";
    if (!o.futex_wait) s += s.empty() ? "no-futex" : "-no-futex";
    if (!o.elimination) s += s.empty() ? "no-elimination" : "-no-elimination";
    if (!o.tid_claims) s += s.empty() ? "no-tid-claims" : "-no-tid-claims";
    if (!o.one_fence) s += s.empty() ? "two-fence" : "-two-fence";
    if (!o.sticky) s += s.empty() ? "no-sticky" : "-no-sticky";
    if (!o.presized) s += s.empty() ? "grown" : "-grown";
    return s.empty() ? "none" : s;
}

}  // namespace ferrite::bench
