// bench/report.cpp: table, JSON and CSV renderings of bench results (see report.hpp).
#include "bench/report.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "ferrite/pmem/backend.hpp"

namespace ferrite::bench {
namespace {

std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("model name", 0) != 0) continue;
        const auto colon = line.find(':');
        if (colon == std::string::npos) break;
        auto v = line.substr(colon + 1);
        v.erase(0, v.find_first_not_of(" \t"));
        return v;
    }
    return {};
}

nlohmann::ordered_json optional_json(bool known, double v) {
    return known ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

std::string csv_cell(const nlohmann::ordered_json& v) {
    if (v.is_null()) return {};
    if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
    if (!v.is_string()) return v.dump();
    auto s = v.get<std::string>();
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

// A latency in ns as a short cell: 850ns, 12.3us, 4.51ms, 1.20s.
std::string latency_cell(std::uint64_t ns) {
    const auto v = static_cast<double>(ns);
    if (ns < 10'000) return std::to_string(ns) + "ns";
    if (ns < 1'000'000) return fmt("%.1fus", v / 1e3);
    if (ns < 1'000'000'000) return fmt("%.2fms", v / 1e6);
    return fmt("%.2fs", v / 1e9);
}

nlohmann::ordered_json latency_json(const std::optional<latency_summary>& l, std::uint64_t latency_summary::*field) {
    return l ? nlohmann::ordered_json((*l).*field) : nlohmann::ordered_json(nullptr);
}

std::string pad_left(const std::string& s, std::size_t w) {
    return s.size() >= w ? s : std::string(w - s.size(), ' ') + s;
}
std::string pad_right(const std::string& s, std::size_t w) {
    return s.size() >= w ? s : s + std::string(w - s.size(), ' ');
}

}  // namespace

machine_info this_machine() {
    return {std::thread::hardware_concurrency(), cpu_model(),
            std::string(pmem::to_string(pmem::current_backend()))};
}

run_info describe_run(const bench_config& cfg, machine_info machine) {
    run_info r;
    r.reps = cfg.reps;
    if (cfg.seconds)
        r.duration = cfg.seconds;
    else
        r.ops_per_thread = cfg.ops_per_thread;
    r.ablation = ablation_name(cfg.options);
    r.seed = cfg.seed;
    r.latency_every = cfg.latency_every;
    r.machine = std::move(machine);
    return r;
}

bool oversubscribed(const point_result& p, const machine_info& m) noexcept {
    return m.hardware_concurrency > 0 && p.threads > m.hardware_concurrency;
}

nlohmann::ordered_json record_json(const point_result& p, const run_info& run) {
    const bool counted = p.persistence_counted;
    nlohmann::ordered_json j = {{"schema", bench_schema},
            {"structure", p.structure},
            {"workload", p.workload},
            {"threads", p.threads},
            {"reps", run.reps},
            {"ops", p.ops},
            {"ops_per_thread", run.ops_per_thread ? nlohmann::ordered_json(*run.ops_per_thread) : nlohmann::ordered_json(nullptr)},
            {"duration", run.duration ? nlohmann::ordered_json(*run.duration) : nlohmann::ordered_json(nullptr)},
            {"seconds", p.seconds},
            {"ops_per_sec", p.ops_per_sec.median},
            {"ops_per_sec_min", p.ops_per_sec.min},
            {"ops_per_sec_max", p.ops_per_sec.max},
            {"pwb_per_op", optional_json(counted, p.pwb_per_op)},
            {"pfence_per_op", optional_json(counted, p.pfence_per_op)},
            {"nt_stores_per_op", optional_json(counted, p.nt_stores_per_op)},
            {"batch_size", p.batch_size},
            {"baseline", p.baseline},
            {"vs_baseline", p.vs_baseline},
            {"vs_baseline_paired", p.vs_baseline_paired},
            {"oversubscribed", oversubscribed(p, run.machine)},
            {"initial_size", p.initial_size},
            {"ablation", p.ablation},
            {"seed", run.seed},
            {"machine",
             {{"hardware_concurrency", run.machine.hardware_concurrency},
              {"cpu", run.machine.cpu},
              {"backend", run.machine.backend}}},
            {"latency_sample_every", run.latency_every},
            {"latency_samples", p.latency ? p.latency->samples : 0},
            {"latency_p50_ns", latency_json(p.latency, &latency_summary::p50_ns)},
            {"latency_p99_ns", latency_json(p.latency, &latency_summary::p99_ns)},
            {"latency_p999_ns", latency_json(p.latency, &latency_summary::p999_ns)}};
    // Only for subjects that report their combiners' own persistence (DFC): appended, so
    // every other record keeps exactly the fields above.
    if (p.combiner_pwb_per_op) j["combiner_pwb_per_op"] = *p.combiner_pwb_per_op;
    if (p.combiner_pfence_per_op) j["combiner_pfence_per_op"] = *p.combiner_pfence_per_op;
    // Keyed workloads only: what the keys were drawn from (initial_size is the prefill).
    if (p.family == op_family::keyed) {
        j["keys"] = p.initial_size;
        j["distribution"] = p.distribution;
        if (p.reads_percent) j["reads_percent"] = *p.reads_percent;
    }
    // set-growth only: the steady-state inserts' latency, and the growth's p99.9 over it.
    if (p.kind == pattern::set_growth) {
        j["steady_latency_samples"] = p.steady_latency ? p.steady_latency->samples : 0;
        j["steady_latency_p50_ns"] = latency_json(p.steady_latency, &latency_summary::p50_ns);
        j["steady_latency_p99_ns"] = latency_json(p.steady_latency, &latency_summary::p99_ns);
        j["steady_latency_p999_ns"] = latency_json(p.steady_latency, &latency_summary::p999_ns);
        j["growth_vs_steady_p999"] = p.latency && p.steady_latency && p.steady_latency->p999_ns > 0
                                         ? nlohmann::ordered_json(static_cast<double>(p.latency->p999_ns) /
                                                                  static_cast<double>(p.steady_latency->p999_ns))
                                         : nlohmann::ordered_json(nullptr);
    }
    return j;
}

nlohmann::ordered_json records_json(const std::vector<point_result>& points, const run_info& run) {
    auto list = nlohmann::ordered_json::array();
    for (const auto& p : points) list.push_back(record_json(p, run));
    return list;
}

const std::vector<std::string>& csv_columns() {
    static const std::vector<std::string> cols = {
        "structure", "workload", "threads", "reps", "ops", "ops_per_thread", "duration", "seconds",
        "ops_per_sec", "ops_per_sec_min", "ops_per_sec_max", "pwb_per_op", "pfence_per_op",
        "nt_stores_per_op", "batch_size", "baseline", "vs_baseline", "vs_baseline_paired", "oversubscribed",
        "initial_size", "ablation", "seed", "hardware_concurrency", "cpu", "backend",
        "latency_sample_every", "latency_samples", "latency_p50_ns", "latency_p99_ns", "latency_p999_ns",
        "keys", "distribution", "reads_percent", "steady_latency_samples", "steady_latency_p50_ns",
        "steady_latency_p99_ns", "steady_latency_p999_ns", "growth_vs_steady_p999"};
    return cols;
}

std::string records_csv(const std::vector<point_result>& points, const run_info& run) {
    std::ostringstream o;
    const auto& cols = csv_columns();
    for (std::size_t i = 0; i < cols.size(); ++i) o << (i ? "," : "") << cols[i];
    o << '\n';
    for (const auto& p : points) {
        auto j = record_json(p, run);
        const auto machine = j["machine"];  // a copy: inserting into j moves its members
        for (const auto& [k, v] : machine.items()) j[k] = v;
        for (std::size_t i = 0; i < cols.size(); ++i) o << (i ? "," : "") << csv_cell(j[cols[i]]);
        o << '\n';
    }
    return o.str();
}

std::string table_text(const std::vector<point_result>& points, const run_info& run) {
    std::ostringstream o;
    std::size_t name_w = std::string("structure").size();
    for (const auto& p : points) name_w = std::max(name_w, p.structure.size());
    const auto cores = run.machine.hardware_concurrency;
    bool any_over = false;
    bool any_combiner = false;
    for (const auto& p : points) any_combiner = any_combiner || p.combiner_pwb_per_op.has_value();
    std::string current;
    for (const auto& p : points) {
        if (p.workload != current) {
            if (!current.empty()) o << '\n';
            current = p.workload;
            o << "workload " << p.workload << ": ";
            if (p.kind == pattern::set_recovery || p.kind == pattern::set_growth || p.kind == pattern::tree_recovery)
                ;  // a fixed amount of work, said below
            else if (run.ops_per_thread)
                o << *run.ops_per_thread << " ops/thread";
            else
                o << fmt("%g", run.duration.value_or(0)) << " s/run";
            if (p.kind == pattern::set_recovery) {
                o << "open() of " << p.initial_size << " keys, threads = recovery threads, Mops/s = million keys "
                  << "recovered per second";
            } else if (p.kind == pattern::tree_recovery) {
                o << "open() of " << p.initial_size << " keys and the first lookup, threads = load threads, Mops/s = "
                  << "million keys per second of that time";
            } else if (p.kind == pattern::set_growth) {
                o << "inserts from " << std::min(growth_start_keys, p.initial_size) << " to " << p.initial_size
                  << " keys (timed); steady: " << (run.ops_per_thread ? *run.ops_per_thread : 0)
                  << " erase+insert pairs/thread at " << p.initial_size << " keys";
            } else if (p.family == op_family::keyed) {
                o << ", " << p.initial_size << " keys, " << p.distribution;
                if (p.reads_percent) o << ", " << *p.reads_percent << "% reads";
            } else if (p.initial_size) {
                o << ", initial size " << p.initial_size;
            }
            o << ", median of " << run.reps << " rep" << (run.reps == 1 ? "" : "s") << " [min - max]"
              << ", backend " << run.machine.backend << ", " << cores << " hardware threads";
            if (run.ablation != "none") o << ", ablation " << run.ablation;
            o << '\n';
            o << pad_right("structure", name_w) << "  threads      Mops/s  [   min  -    max]   pwb/op  pfence/op"
              << "   batch       p50       p99     p99.9  vs " << p.baseline << (any_combiner ? "  combiner: pwb/op pfence/op" : "");
            if (p.kind == pattern::set_recovery || p.kind == pattern::tree_recovery) o << "         ms";
            if (p.kind == pattern::set_growth)
                o << pad_left("steady p50", 12) << pad_left("p99", 10) << pad_left("p99.9", 10)
                  << pad_left("p99.9 growth/steady", 21);
            o << '\n';
        }
        const bool over = oversubscribed(p, run.machine);
        any_over = any_over || over;
        const double m = 1e-6;
        o << pad_right(p.structure, name_w) << "  " << pad_left(std::to_string(p.threads) + (over ? "*" : " "), 7)
          << "  " << pad_left(fmt("%.3f", p.ops_per_sec.median * m), 10) << "  ["
          << pad_left(fmt("%.3f", p.ops_per_sec.min * m), 6) << " - "
          << pad_left(fmt("%.3f", p.ops_per_sec.max * m), 6) << "]"
          << pad_left(p.persistence_counted ? fmt("%.2f", p.pwb_per_op) : "n/a", 9)
          << pad_left(p.persistence_counted ? fmt("%.2f", p.pfence_per_op) : "n/a", 11)
          << pad_left(p.batch_size > 0 ? fmt("%.2f", p.batch_size) : "-", 8);
        if (p.latency)
            o << pad_left(latency_cell(p.latency->p50_ns), 10) << pad_left(latency_cell(p.latency->p99_ns), 10)
              << pad_left(latency_cell(p.latency->p999_ns), 10);
        else
            o << pad_left("-", 10) << pad_left("-", 10) << pad_left("-", 10);
        o << "  " << fmt("%.2fx", p.vs_baseline);
        if (p.combiner_pwb_per_op && p.combiner_pfence_per_op)
            o << pad_left(fmt("%.2f", *p.combiner_pwb_per_op), 12) << pad_left(fmt("%.2f", *p.combiner_pfence_per_op), 10);
        if (p.kind == pattern::set_recovery || p.kind == pattern::tree_recovery)
            o << pad_left(fmt(p.seconds < 0.01 ? "%.3f" : "%.1f", p.seconds * 1e3), 11);
        if (p.kind == pattern::set_growth) {
            if (p.steady_latency) {
                o << pad_left(latency_cell(p.steady_latency->p50_ns), 12)
                  << pad_left(latency_cell(p.steady_latency->p99_ns), 10)
                  << pad_left(latency_cell(p.steady_latency->p999_ns), 10);
                o << pad_left(p.latency && p.steady_latency->p999_ns > 0
                                  ? fmt("%.2fx", static_cast<double>(p.latency->p999_ns) /
                                                     static_cast<double>(p.steady_latency->p999_ns))
                                  : "-",
                              21);
            } else {
                o << pad_left("-", 12) << pad_left("-", 10) << pad_left("-", 10) << pad_left("-", 21);
            }
        }
        o << '\n';
    }
    if (any_over) o << "* oversubscribed: more threads than the " << cores << " hardware threads\n";
    bool uncounted = false;
    for (const auto& p : points) uncounted = uncounted || !p.persistence_counted;
    bool recovery = false, tree_recovery = false;
    for (const auto& p : points) {
        recovery = recovery || p.kind == pattern::set_recovery || p.kind == pattern::tree_recovery;
        tree_recovery = tree_recovery || p.kind == pattern::tree_recovery;
    }
    if (uncounted)
        o << (recovery ? "n/a: not counted (PMDK flushes outside ferrite/pmem; set-recovery's and tree-recovery's "
                         "recovery threads are the structure's)\n"
                       : "n/a: the structure flushes outside ferrite/pmem (PMDK); its pwb/pfence are not counted\n");
    for (const auto& p : points)
        if (p.kind == pattern::set_recovery) {
            o << "set-recovery: ms = median time of the structure's open() (the pool reopened before, untimed)\n";
            break;
        }
    if (tree_recovery)
        o << "tree-recovery: ms = median time of the structure's open() and its first completed lookup (the pool "
             "reopened before, every key checked after, untimed)\n";
    if (run.latency_every > 0)
        o << "p50/p99/p99.9: latency of one operation in " << run.latency_every
          << " (sampled at random), all repetitions\n";
    return o.str();
}

}  // namespace ferrite::bench
