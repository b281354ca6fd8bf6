// Crash campaigns (see ferrite/sim/campaign.hpp).
#include "ferrite/sim/campaign.hpp"

#include <unistd.h>

#include <atomic>
#include <thread>

#include "crash_check.hpp"
#include "ferrite/error.hpp"
#include "ferrite/pmem/pool_path.hpp"
#include "ferrite/sim/rng.hpp"
#include "ferrite/sim/session.hpp"
#include "ferrite/sim/stop_the_world.hpp"
#include "ferrite/sim/token_scheduler.hpp"

namespace ferrite::sim {
namespace {

std::string layout_of(const target& t) { return "crashtest-" + std::string(t.name()); }

// State shared by the runs of one campaign.
class campaign_runner {
public:
    campaign_runner(const target& t, const campaign_config& cfg)
        : target_(t), cfg_(cfg), scratch_(cfg.scratch_dir.empty() ? pmem::pool_directory() : cfg.scratch_dir),
          run_path_(scratch_ / ("ferrite-crashtest-" + std::to_string(::getpid()) + "-run")),
          checker_(scratch_ / ("ferrite-crashtest-" + std::to_string(::getpid()) + "-image"),
                   layout_of(t), sites_, cfg.recovery_crash_rate) {
        for (const auto& id : cfg.disabled_sites) sites_.disable(id);
        result_.target = std::string(t.name());
        result_.threads = cfg.threads ? cfg.threads : t.default_threads();
        result_.ops_per_thread = cfg.ops_per_thread ? cfg.ops_per_thread : t.default_ops_per_thread();
        result_.moments = cfg.moments;
        if (result_.threads == 0 || result_.threads > max_threads)
            throw usage_error("--threads must be 1 to " + std::to_string(max_threads));
        if (cfg.crash_at && cfg.moments != crash_moments::events)
            throw usage_error("--crash-at rebuilds an event crash point; it cannot be combined "
                              "with --moments random");
    }
    ~campaign_runner() { std::filesystem::remove(run_path_); }

    campaign_result run() {
        const auto start = std::chrono::steady_clock::now();
        const std::uint64_t budget = cfg_.crash_at ? 1 : cfg_.crash_points;
        // A workload with no persistence event would never reach a crash point: give up
        // after a few runs without events.
        std::uint64_t empty_runs = 0;
        while (!done(budget) && empty_runs < 3) {
            const auto before = result_.events;
            const auto seed = cfg_.crash_at ? cfg_.seed : cfg_.seed + result_.runs;
            if (cfg_.moments == crash_moments::events)
                run_events(seed, budget);
            else
                run_random(seed, budget);
            ++result_.runs;
            empty_runs = result_.events == before ? empty_runs + 1 : 0;
            if (cfg_.crash_at) break;
        }
        result_.sites = sites_.report();
        result_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return result_;
    }

private:
    bool done(std::uint64_t budget) const {
        return result_.crash_points >= budget ||
               (cfg_.stop_at_first_violation && result_.violation_count > 0);
    }

    run_config config(std::uint64_t seed = 0) const {
        return run_config{result_.threads, result_.ops_per_thread, seed};
    }
    std::unique_ptr<workload> fresh_workload(pmem::pool& p, std::uint64_t seed) const {
        return target_.prepare(p, config(seed));
    }

    pmem::pool fresh_pool() {
        std::filesystem::remove(run_path_);
        return pmem::pool::create(run_path_, layout_of(target_), target_.pool_size(config()));
    }

    void judge(const workload& w, const progress_snapshot& at_crash, std::uint64_t run_seed,
               std::uint64_t event, std::uint64_t crash_seed) {
        auto verdict = checker_.check(image_, w, at_crash, crash_seed);
        ++result_.crash_points;
        if (verdict.recovery_event) ++result_.recovery_crashes;
        if (!verdict.what.empty()) {
            ++result_.violation_count;
            if (result_.violations.size() < cfg_.max_reported)
                result_.violations.push_back(
                    {result_.crash_points, run_seed, event, verdict.recovery_event, verdict.what});
        }
        if (cfg_.on_progress) cfg_.on_progress(result_.crash_points, cfg_.crash_at ? 1 : cfg_.crash_points);
    }

    // One run, one thread at a time; a crash point before every event (or only crash_at).
    void run_events(std::uint64_t seed, std::uint64_t budget) {
        auto pool = fresh_pool();
        auto w = fresh_workload(pool, seed);
        token_scheduler scheduler(result_.threads, seed);
        session* self = nullptr;
        session::options opts;
        opts.scheduler = &scheduler;
        opts.at_event = [&](std::uint64_t event) {
            if (done(budget) || (cfg_.crash_at && event != *cfg_.crash_at)) return;
            // Only the token holder runs: the other workers are parked in the scheduler.
            const auto at_crash = w->progress().snapshot();
            const auto crash_seed = mix(seed, event);
            self->crash_image(crash_seed, image_);
            judge(*w, at_crash, seed, event, crash_seed);
        };
        session s(pool.base(), pool.size(), result_.threads, sites_, std::move(opts));
        self = &s;
        std::vector<std::thread> workers;
        for (unsigned t = 0; t < result_.threads; ++t)
            workers.emplace_back([&, t] {
                session::binding bind(&s, t);
                scheduler.enter(t);
                w->run_thread(t);
                scheduler.leave(t);
            });
        for (auto& th : workers) th.join();
        result_.events += s.events();
    }

    // One run with free-running workers, stopped by the controller (this thread) at random
    // moments until they finish.
    void run_random(std::uint64_t seed, std::uint64_t budget) {
        auto pool = fresh_pool();
        auto w = fresh_workload(pool, seed);
        session s(pool.base(), pool.size(), result_.threads, sites_, {});
        world_stopper stopper(result_.threads);
        std::atomic<unsigned> registered{0}, finished{0};
        std::vector<std::thread> workers;
        for (unsigned t = 0; t < result_.threads; ++t)
            workers.emplace_back([&, t] {
                session::binding bind(&s, t);
                stopper.register_worker(t);
                registered.fetch_add(1);
                while (registered.load() < result_.threads) std::this_thread::yield();
                w->run_thread(t);
                stopper.finish_worker(t);
                finished.fetch_add(1);
            });
        // No stop before every worker is registered: stop() signals registered workers only,
        // and a worker registering after it returned would run while the image is taken.
        while (registered.load() < result_.threads) std::this_thread::yield();
        image_.resize(pool.size());
        rng random(mix(seed, 0x7a11));
        std::uint64_t stops = 0;
        while (finished.load() < result_.threads) {
            // Busy-wait a random 0..50 us: sleeping has too coarse a granularity.
            const auto until = std::chrono::steady_clock::now() +
                               std::chrono::nanoseconds(random.below(50'000));
            while (std::chrono::steady_clock::now() < until) std::this_thread::yield();
            if (done(budget)) continue;  // let the workers finish
            if (!stopper.stop()) continue;
            const auto at_crash = w->progress().snapshot();
            const auto crash_seed = mix(seed, ++stops);
            s.crash_image(crash_seed, image_);
            stopper.resume();
            judge(*w, at_crash, seed, 0, crash_seed);
        }
        for (auto& th : workers) th.join();
        result_.events += s.events();
    }

    const target& target_;
    const campaign_config& cfg_;
    site_registry sites_;
    std::filesystem::path scratch_;
    std::filesystem::path run_path_;
    detail::crash_checker checker_;
    std::vector<std::byte> image_;
    campaign_result result_;
};

}  // namespace

campaign_result run_campaign(const target& t, const campaign_config& cfg) {
    return campaign_runner(t, cfg).run();
}

std::string repro_command(const campaign_result& r, const campaign_config& cfg, const violation& v) {
    std::string cmd = "ferrite crashtest " + r.target + " --threads " + std::to_string(r.threads) +
                      " --ops " + std::to_string(r.ops_per_thread) + " --seed " +
                      std::to_string(v.run_seed);
    if (r.moments == crash_moments::events)
        cmd += " --crash-at " + std::to_string(v.event);
    else
        cmd += " --moments random --crashes " + std::to_string(cfg.crash_points);
    if (cfg.recovery_crash_rate != campaign_config{}.recovery_crash_rate) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", cfg.recovery_crash_rate);
        cmd += " --recovery-crash-rate " + std::string(buf);
    }
    for (const auto& site : cfg.disabled_sites) cmd += " --mutate " + site;
    if (r.moments == crash_moments::random) cmd += "   # timing-dependent: may need reruns";
    return cmd;
}

}  // namespace ferrite::sim
