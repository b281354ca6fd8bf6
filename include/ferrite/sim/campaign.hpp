// ferrite/sim/campaign.hpp: run a target under the crash simulator at many crash points.
//
// A campaign repeats *runs*: a fresh pool, the target's workload on `threads` threads, and
// crash points taken while it runs, until `crash_points` have been checked. Two kinds of
// crash point (docs/crash-testing.md):
//
//   events  (default) the workload runs one thread at a time under a token_scheduler drawn
//           from the run seed; a crash point is taken before every persistence event of
//           the run. Run r of a campaign with seed S uses seed S + r, and crash point k of
//           that run is rebuilt exactly by `--seed S+r --crash-at k`.
//   random  the workload's threads run freely; a controller stops them all at random
//           moments with a signal (stop_the_world.hpp), so crashes land between any two
//           instructions. Timing-dependent: the seed fixes the delays, not the interleaving.
//
// At each crash point: the crash image (session::crash_image) is written to a scratch pool
// file and opened as a fresh pool; with probability recovery_crash_rate the recovery is
// itself crashed at a random one of its persistence events and the resulting image is
// recovered again; then the workload's verify() judges the recovered state against the
// progress every thread had made. Every call site seen is reported with its counts.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ferrite/sim/site_registry.hpp"
#include "ferrite/sim/target.hpp"

namespace ferrite::sim {

enum class crash_moments { events, random };

struct campaign_config {
    unsigned threads = 0;              // 0: the target's default
    std::uint64_t ops_per_thread = 0;  // 0: the target's default
    std::uint64_t crash_points = 10000;
    std::uint64_t seed = 1;
    crash_moments moments = crash_moments::events;
    double recovery_crash_rate = 0.25;
    std::optional<std::uint64_t> crash_at;     // events mode: only this event of run `seed`
    std::vector<std::string> disabled_sites;  // flush mutation: these sites do nothing
    bool stop_at_first_violation = false;
    std::size_t max_reported = 10;       // violations kept with details
    std::filesystem::path scratch_dir;   // empty: the pool directory
    std::function<void(std::uint64_t done, std::uint64_t total)> on_progress;
};

struct violation {
    std::uint64_t crash_point = 0;  // 1-based, within the campaign
    std::uint64_t run_seed = 0;
    std::uint64_t event = 0;        // events mode: the crash point's event in its run
    std::optional<std::uint64_t> recovery_event;  // recovery was crashed at this event
    std::string what;
};

struct campaign_result {
    std::string target;
    unsigned threads = 0;
    std::uint64_t ops_per_thread = 0;
    crash_moments moments = crash_moments::events;
    std::uint64_t crash_points = 0;
    std::uint64_t recovery_crashes = 0;
    std::uint64_t runs = 0;
    std::uint64_t events = 0;
    std::uint64_t violation_count = 0;
    std::vector<violation> violations;  // the first max_reported
    std::vector<site_report> sites;
    double seconds = 0;
};

campaign_result run_campaign(const target&, const campaign_config&);

// A one-line `ferrite crashtest` command that rebuilds the violation.
std::string repro_command(const campaign_result&, const campaign_config&, const violation&);

}  // namespace ferrite::sim
