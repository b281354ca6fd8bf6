// `ferrite bench`: measure structures on a workload over a list of thread counts.
// The harness, workloads, baselines and outputs live in bench/ (bench/harness.hpp explains
// the measurement); this file parses the command line and picks the outputs.
// Exit status: 0 measured; 1 a measurement or an output failed; 2 bad usage (unknown
// structure or workload, a structure that lacks an operation of the workload...).
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>

#include "bench/harness.hpp"
#include "bench/plot.hpp"
#include "bench/registry.hpp"
#include "bench/report.hpp"
#include "bench/workloads.hpp"
#include "commands.hpp"
#include "ferrite/error.hpp"
#include "ferrite/pmem/backend.hpp"
#include "ferrite/pmem/pool_path.hpp"
#include "progress_bar.hpp"

namespace ferrite::cli {
namespace {

struct bench_args {
    bool list = false;
    std::string structures;
    std::string workloads;
    std::string threads;
    unsigned reps = bench::default_reps;
    std::optional<std::uint64_t> ops;
    std::optional<double> seconds;
    std::optional<std::uint64_t> initial_size;
    std::optional<std::uint64_t> keys;
    std::optional<unsigned> reads;
    std::string distribution;
    std::uint64_t seed = 1;
    std::uint32_t latency_every = bench::default_latency_every;
    std::string ablation = "none";
    std::optional<std::uint32_t> pwb_ns;
    std::optional<std::uint32_t> fence_ns;
    bool json = false;
    std::string csv;
    std::string plot;
};

// "a,b,c" -> {"a", "b", "c"}; an empty item is a usage error.
std::vector<std::string> split_list(const std::string& s, const char* option) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
        const auto comma = s.find(',', start);
        auto item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (item.empty()) throw usage_error(std::string(option) + " '" + s + "' has an empty item");
        out.push_back(std::move(item));
        if (comma == std::string::npos) return out;
        start = comma + 1;
    }
}

std::vector<unsigned> parse_threads(const std::string& s) {
    std::vector<unsigned> out;
    for (const auto& item : split_list(s, "--threads")) {
        unsigned v = 0;
        const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
        if (ec != std::errc() || end != item.data() + item.size())
            throw usage_error("--threads: '" + item + "' is not a thread count (example: 1,2,4,8)");
        out.push_back(v);
    }
    return out;
}

// Generated from the registrations (bench/registry.hpp, bench/workloads.cpp), one section
// per family: a structure runs the workloads of its own family.
int list() {
    std::size_t w = 0;
    for (const auto& s : bench::subjects()) w = std::max(w, s.name.size());
    for (const auto& wl : bench::workloads()) w = std::max(w, wl.name.size());
    const auto width = static_cast<int>(w);
    for (auto family : {bench::op_family::sequence, bench::op_family::keyed}) {
        const auto f = std::string(bench::to_string(family));
        std::printf("%s structures:\n", f.c_str());
        for (const auto& s : bench::subjects())
            if (s.family == family) std::printf("  %-*s  %s\n", width, s.name.c_str(), s.summary.c_str());
    }
    for (auto family : {bench::op_family::sequence, bench::op_family::keyed}) {
        const auto f = std::string(bench::to_string(family));
        std::printf("%s workloads:\n", f.c_str());
        for (const auto& wl : bench::workloads()) {
            if (wl.family != family) continue;
            std::string needs;
            for (auto o : wl.needs) {
                if (!needs.empty()) needs += ' ';
                needs += bench::to_string(o);
            }
            std::printf("  %-*s  %s [%s]\n", width, wl.name.c_str(), wl.summary.c_str(), needs.c_str());
        }
    }
    return 0;
}

bench::subject_options parse_ablation(const std::string& name, const std::string& where) {
    const auto options = bench::ablation_from_string(name);
    if (!options)
        throw usage_error(where +
                          ": the ablation must be none, no-nt, no-futex, no-nt-no-futex, no-elimination, "
                          "no-tid-claims, two-fence, no-sticky, two-fence-no-sticky or grown, not '" + name + "'");
    return *options;
}

// NAME or NAME:ABLATION (that structure runs with its own ablation, e.g. dfc-stack:no-elimination).
bench::measured_structure parse_structure(const std::string& entry) {
    const auto colon = entry.find(':');
    const auto name = entry.substr(0, colon);
    const auto* s = bench::find_subject(name);
    if (!s) throw usage_error("no bench structure '" + name + "'; `ferrite bench --list` names them");
    if (colon == std::string::npos) return {*s};
    return {*s, parse_ablation(entry.substr(colon + 1), "--structure " + entry)};
}

bench::bench_config to_config(const common_options& common, const bench_args& a) {
    bench::bench_config cfg;
    if (a.structures.empty()) throw usage_error("name a structure with --structure (see `ferrite bench --list`)");
    if (a.workloads.empty()) throw usage_error("name a workload with --workload (see `ferrite bench --list`)");
    for (const auto& entry : split_list(a.structures, "--structure")) cfg.structures.push_back(parse_structure(entry));
    for (const auto& name : split_list(a.workloads, "--workload")) {
        const auto* w = bench::find_workload(name);
        if (!w) throw usage_error("no workload '" + name + "'; `ferrite bench --list` names them");
        cfg.workloads.push_back(w);
    }
    if (!a.threads.empty()) cfg.threads = parse_threads(a.threads);
    cfg.reps = a.reps;
    if (a.ops) cfg.ops_per_thread = *a.ops;
    cfg.seconds = a.seconds;
    cfg.initial_size = a.initial_size;
    cfg.keys = a.keys;
    cfg.reads_percent = a.reads;
    if (!a.distribution.empty()) {
        cfg.distribution = bench::key_distribution_from_string(a.distribution);
        if (!cfg.distribution)
            throw usage_error("--distribution must be uniform or zipfian, not '" + a.distribution + "'");
    }
    cfg.seed = a.seed;
    cfg.latency_every = a.latency_every;
    cfg.options = parse_ablation(a.ablation, "--ablation");
    cfg.pool_dir = common.pool_dir.empty() ? pmem::pool_directory() : std::filesystem::path(common.pool_dir);
    bench::validate(cfg);
    return cfg;
}

int bench_run(const common_options& common, const bench_args& a) {
    auto cfg = to_config(common, a);
    if (a.pwb_ns || a.fence_ns) {
        if (pmem::current_backend() != pmem::backend::emulated)
            throw usage_error("--pwb-ns and --fence-ns need --backend emulated");
        auto lat = pmem::current_emulated_latency();
        if (a.pwb_ns) lat.pwb_ns = *a.pwb_ns;
        if (a.fence_ns) lat.fence_ns = *a.fence_ns;
        pmem::set_emulated_latency(lat);
    }
    progress_bar bar("bench");
    cfg.on_progress = [&](const std::string& label, std::uint64_t done, std::uint64_t total) {
        bar.set_label("bench " + label);
        bar.update(done, total);
    };
    const auto points = bench::run_bench(cfg);
    const auto run = bench::describe_run(cfg, bench::this_machine());
    if (a.json)
        std::cout << bench::records_json(points, run).dump(2) << '\n';
    else
        std::cout << bench::table_text(points, run);
    std::cout.flush();
    auto& notes = a.json ? std::cerr : std::cout;  // keep stdout pure JSON
    if (!a.csv.empty()) {
        std::ofstream out(a.csv);
        out << bench::records_csv(points, run);
        if (!out) throw error("--csv: cannot write " + a.csv);
        notes << "wrote " << a.csv << '\n';
    }
    if (!a.plot.empty())
        for (const auto& png : bench::write_plots(a.plot, bench::records_csv(points, run)))
            notes << "wrote " << png.string() << '\n';
    return 0;
}

}  // namespace

void register_bench_command(CLI::App& app, const common_options& common, action& chosen) {
    static bench_args args;
    auto* c = app.add_subcommand("bench", "measure structures' throughput and persistence cost (docs/cli.md)");
    c->add_flag("--list", args.list,
                "print the structures and workloads, sequence and keyed, one a line with a summary");
    c->add_option("--structure,-s", args.structures,
                  "structures to measure, comma-separated; the first is the baseline of the ratios; "
                  "NAME:ABLATION gives one its own ablation (dfc-stack,dfc-stack:no-elimination)");
    c->add_option("--workload,-w", args.workloads, "workloads, comma-separated (see --list)");
    c->add_option("--threads,-t", args.threads, "thread counts, comma-separated (default 1,2,4,8,16,32,64)");
    c->add_option("--reps", args.reps, "repetitions per point, the median is reported (default 5)");
    auto* ops = c->add_option("--ops", args.ops, "operations per thread and repetition (default 200000)");
    auto* secs = c->add_option("--seconds", args.seconds, "run each repetition for this long instead of --ops");
    ops->excludes(secs);
    c->add_option("--initial-size", args.initial_size,
                  "sequence workloads: elements in the structure before timing (default: 1024 for get/swap "
                  "workloads, else 0)");
    c->add_option("--keys", args.keys,
                  "keyed workloads: keys in the structure before timing, the keys 2i for i < N (default 100000; "
                  "ycsb-load 0)");
    c->add_option("--reads", args.reads,
                  "set-mix: percent of contains, the rest split evenly between insert and erase (default 90)");
    c->add_option("--distribution", args.distribution,
                  "keyed workloads: uniform or zipfian (YCSB's scrambled Zipfian, theta 0.99) keys "
                  "(default: zipfian for ycsb-*, uniform for set-mix)");
    c->add_option("--seed", args.seed, "seed of the operation streams (default 1)");
    c->add_option("--latency-every", args.latency_every,
                  "time one operation in N on average (random gaps) for the p50/p99/p99.9 latency "
                  "columns and fields; 0 switches timing off (default 256)");
    c->add_option("--ablation", args.ablation,
                  "none (default), no-nt, no-futex, no-nt-no-futex, no-elimination, no-tid-claims, two-fence, no-sticky, two-fence-no-sticky, grown");
    c->add_option("--pwb-ns", args.pwb_ns, "with --backend emulated: busy-wait per written-back line (default 100)");
    c->add_option("--fence-ns", args.fence_ns, "with --backend emulated: busy-wait per fence (default 0)");
    c->add_flag("--json", args.json, "print JSON records instead of the table (schema in docs/cli.md)");
    c->add_option("--csv", args.csv, "also write the records as CSV to FILE");
    c->add_option("--plot", args.plot, "also write DIR/bench.csv and DIR/<workload>.png (python3-matplotlib)");
    c->callback([&] {
        chosen = [&] {
            if (args.list) return list();
            return bench_run(common, args);
        };
    });
}

}  // namespace ferrite::cli
