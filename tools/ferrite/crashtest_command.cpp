// `ferrite crashtest`: run a crash campaign, or flush mutation testing, on a target.
// Exit status: 0 no violation (with --mutate: every site killed); 3 a violation was found
// (with --mutate: a site survived, or the clean campaign failed); 1 / 2 as for every command.
#include <cstdio>
#include <iostream>
#include <optional>

#include "commands.hpp"
#include "crashtest_report.hpp"
#include "ferrite/error.hpp"
#include "ferrite/sim/campaign.hpp"
#include "ferrite/sim/mutation.hpp"
#include "progress_bar.hpp"
#include "targets.hpp"

namespace ferrite::cli {
namespace {

constexpr int exit_found = 3;

struct crashtest_args {
    std::string target;
    bool list = false;
    std::uint64_t crashes = 10000;
    unsigned threads = 0;
    std::uint64_t ops = 0;
    std::uint64_t seed = 1;
    std::string moments = "events";
    double recovery_crash_rate = sim::campaign_config{}.recovery_crash_rate;
    std::optional<std::uint64_t> crash_at;
    std::string mutate;
    bool json = false;
};

int list_targets() {
    for (const auto* t : crash::builtin_targets().all()) std::printf("%s\n", std::string(t->name()).c_str());
    return 0;
}

sim::campaign_config to_config(const common_options& common, const crashtest_args& a) {
    sim::campaign_config cfg;
    if (a.moments != "events" && a.moments != "random")
        throw usage_error("--moments must be 'events' or 'random', not '" + a.moments + "'");
    if (a.recovery_crash_rate < 0 || a.recovery_crash_rate > 1)
        throw usage_error("--recovery-crash-rate must be between 0 and 1");
    if (a.crashes == 0) throw usage_error("--crashes must be at least 1");
    cfg.threads = a.threads;
    cfg.ops_per_thread = a.ops;
    cfg.crash_points = a.crashes;
    cfg.seed = a.seed;
    cfg.moments = a.moments == "events" ? sim::crash_moments::events : sim::crash_moments::random;
    cfg.recovery_crash_rate = a.recovery_crash_rate;
    cfg.crash_at = a.crash_at;
    if (!common.pool_dir.empty()) cfg.scratch_dir = common.pool_dir;
    return cfg;
}

const sim::target& find_target(const std::string& name) {
    if (name.empty()) throw usage_error("name a target (see `ferrite crashtest --list`)");
    const auto* t = crash::builtin_targets().find(name);
    if (!t) throw usage_error("no crash target '" + name + "'; `ferrite crashtest --list` names them");
    return *t;
}

int campaign(const common_options& common, const crashtest_args& a) {
    const auto& t = find_target(a.target);
    auto cfg = to_config(common, a);
    // With --crash-at, --mutate SITE rebuilds a mutation's violation: the site stays off.
    if (!a.mutate.empty()) cfg.disabled_sites = {a.mutate};
    progress_bar bar("crashtest " + a.target);
    cfg.on_progress = [&](std::uint64_t done, std::uint64_t total) { bar.update(done, total); };
    const auto r = sim::run_campaign(t, cfg);
    if (a.json)
        std::cout << campaign_json(r, cfg).dump(2) << '\n';
    else
        std::cout << campaign_text(r, cfg);
    return r.violation_count == 0 && r.crash_points > 0 ? 0 : exit_found;
}

int mutation(const common_options& common, const crashtest_args& a) {
    const auto& t = find_target(a.target);
    auto cfg = to_config(common, a);
    progress_bar bar("mutation " + a.target);
    const auto only = a.mutate == "all" ? std::nullopt : std::optional<std::string>(a.mutate);
    const auto m = sim::run_mutation(t, cfg, only, [&](const std::string& site, std::size_t i, std::size_t n) {
        bar.set_label("mutation " + site);
        bar.update(i, n);
    });
    if (a.json)
        std::cout << mutation_json(m, cfg).dump(2) << '\n';
    else
        std::cout << mutation_text(m, cfg);
    return m.survivors().empty() ? 0 : exit_found;
}

}  // namespace

void register_crashtest_command(CLI::App& app, const common_options& common, action& chosen) {
    static crashtest_args args;
    auto* c = app.add_subcommand("crashtest",
                                 "crash-test a structure in the simulator (docs/crash-testing.md)");
    c->add_option("TARGET", args.target, "target name (see --list)");
    c->add_flag("--list", args.list, "print the target names, one a line");
    c->add_option("--crashes", args.crashes, "crash points to check (per site with --mutate; default 10000)");
    c->add_option("--threads", args.threads, "worker threads (default: the target's)");
    c->add_option("--ops", args.ops, "operations per thread and run (default: the target's)");
    c->add_option("--seed", args.seed, "campaign seed; run r uses seed + r (default 1)");
    c->add_option("--moments", args.moments,
                  "events: before every persistence event, reproducible (default); random: stop "
                  "all threads at random instants");
    c->add_option("--recovery-crash-rate", args.recovery_crash_rate,
                  "fraction of crash points whose recovery is crashed too (default 0.25)");
    c->add_option("--crash-at", args.crash_at,
                  "rebuild one crash point: the event of the run with --seed (from a violation's "
                  "reproduce line)");
    c->add_option("--mutate", args.mutate,
                  "flush mutation testing: switch off SITE, or each site in turn with 'all'");
    c->add_flag("--json", args.json, "machine-readable output (schema in docs/cli.md)");
    c->callback([&] {
        chosen = [&] {
            if (args.list) return list_targets();
            if (!args.mutate.empty() && !args.crash_at) return mutation(common, args);
            return campaign(common, args);
        };
    });
}

}  // namespace ferrite::cli
