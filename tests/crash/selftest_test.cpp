// The crash simulator tested through real campaigns on its self-test targets
// (crash/selftest): seeded bugs are caught quickly, correct structures survive long
// campaigns, violations are reproducible from their seed, and flush mutation testing kills
// every site of the correct targets. Sanitizer builds run a tenth of the crash points.
#include <gtest/gtest.h>

#include "ferrite/sim/campaign.hpp"
#include "ferrite/sim/mutation.hpp"
#include "targets.hpp"

namespace ferrite::sim {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr std::uint64_t scale_down = 10;
#else
constexpr std::uint64_t scale_down = 1;
#endif
#if defined(__SANITIZE_THREAD__)
constexpr bool under_tsan = true;
#else
constexpr bool under_tsan = false;
#endif

const target& named(std::string_view name) {
    const auto* t = crash::builtin_targets().find(name);
    EXPECT_NE(t, nullptr) << name;
    return *t;
}

campaign_config config(std::uint64_t points, unsigned threads = 2, std::uint64_t seed = 1) {
    campaign_config c;
    c.crash_points = points;
    c.threads = threads;
    c.seed = seed;
    return c;
}

TEST(CrashSelftest, EveryTargetIsListedOnceWithASummary) {
    const auto all = crash::builtin_targets().all();
    EXPECT_GE(all.size(), 8u);
    for (const auto* t : all) EXPECT_FALSE(t->summary().empty()) << t->name();
}

TEST(CrashSelftest, DataThenFlagWithoutFlushIsCaughtWithin100CrashPoints) {
    for (unsigned threads : {1u, 2u, 4u})
        for (std::uint64_t seed = 1; seed <= 5; ++seed) {
            auto c = config(100, threads, seed);
            c.stop_at_first_violation = true;
            const auto r = run_campaign(named("buggy-log-no-flush"), c);
            ASSERT_GT(r.violation_count, 0u) << threads << " threads, seed " << seed;
            EXPECT_LE(r.violations.front().crash_point, 100u);
        }
}

TEST(CrashSelftest, CorrectLogSurvives100000CrashPoints) {
    const auto r = run_campaign(named("log"), config(100'000 / scale_down));
    EXPECT_EQ(r.crash_points, 100'000 / scale_down);
    EXPECT_EQ(r.violation_count, 0u) << (r.violations.empty() ? "" : r.violations.front().what);
}

TEST(CrashSelftest, CorrectTargetsSurviveMultiThreaded) {
    for (const char* name : {"log", "log-nt", "transfer"}) {
        const auto r = run_campaign(named(name), config(10'000 / scale_down, 4, 7));
        EXPECT_EQ(r.violation_count, 0u) << name << ": "
                                         << (r.violations.empty() ? "" : r.violations.front().what);
    }
}

TEST(CrashSelftest, MissingFenceWrongLineAndReorderedFlagAreCaught) {
    for (const char* name : {"buggy-log-no-fence", "buggy-log-wrong-line", "buggy-log-flag-first"}) {
        auto c = config(1000);
        c.stop_at_first_violation = true;
        EXPECT_GT(run_campaign(named(name), c).violation_count, 0u) << name;
    }
}

TEST(CrashSelftest, RecoveryThatIsNotRestartableIsCaughtOnlyByCrashingRecovery) {
    auto c = config(10'000 / scale_down);
    const auto with = run_campaign(named("buggy-transfer-recovery"), c);
    EXPECT_GT(with.recovery_crashes, 0u);
    EXPECT_GT(with.violation_count, 0u);
    for (const auto& v : with.violations) EXPECT_TRUE(v.recovery_event.has_value()) << v.what;
    c.recovery_crash_rate = 0;
    const auto without = run_campaign(named("buggy-transfer-recovery"), c);
    EXPECT_EQ(without.recovery_crashes, 0u);
    EXPECT_EQ(without.violation_count, 0u);
}

TEST(CrashSelftest, SameSeedSameCampaign) {
    const auto a = run_campaign(named("buggy-log-no-fence"), config(2000, 4, 11));
    const auto b = run_campaign(named("buggy-log-no-fence"), config(2000, 4, 11));
    EXPECT_EQ(a.events, b.events);
    EXPECT_EQ(a.runs, b.runs);
    EXPECT_EQ(a.violation_count, b.violation_count);
    ASSERT_EQ(a.violations.size(), b.violations.size());
    for (std::size_t i = 0; i < a.violations.size(); ++i) {
        EXPECT_EQ(a.violations[i].crash_point, b.violations[i].crash_point);
        EXPECT_EQ(a.violations[i].what, b.violations[i].what);
    }
}

TEST(CrashSelftest, MultiThreadedViolationsReproduceFromTheirSeedAndEvent) {
    for (const char* name : {"buggy-log-no-fence", "buggy-transfer-recovery"}) {
        auto c = config(3000, 4, 5);
        const auto r = run_campaign(named(name), c);
        ASSERT_FALSE(r.violations.empty()) << name;
        for (const auto& v : r.violations) {
            auto again = c;
            again.seed = v.run_seed;
            again.crash_at = v.event;
            const auto one = run_campaign(named(name), again);
            ASSERT_EQ(one.crash_points, 1u);
            ASSERT_EQ(one.violation_count, 1u) << repro_command(r, c, v);
            EXPECT_EQ(one.violations.front().what, v.what);
            EXPECT_EQ(one.violations.front().recovery_event, v.recovery_event);
        }
    }
}

TEST(CrashSelftest, ReproCommandNamesSeedEventAndMutation) {
    auto c = config(100);
    c.disabled_sites = {"crash/selftest/log_target.cpp:1:2"};
    campaign_result r;
    r.target = "log";
    r.threads = 2;
    r.ops_per_thread = 40;
    violation v;
    v.run_seed = 9;
    v.event = 33;
    EXPECT_EQ(repro_command(r, c, v),
              "ferrite crashtest log --threads 2 --ops 40 --seed 9 --crash-at 33 --mutate "
              "crash/selftest/log_target.cpp:1:2");
}

TEST(CrashSelftest, FlushMutationKillsEverySiteOfTheCorrectTargets) {
    for (const char* name : {"log", "log-nt", "transfer"}) {
        const auto m = run_mutation(named(name), config(2000 / scale_down));
        EXPECT_EQ(m.baseline.violation_count, 0u);
        EXPECT_GE(m.verdicts.size(), 4u) << name;
        EXPECT_TRUE(m.survivors().empty()) << name << ": " << m.survivors().front();
        for (const auto& v : m.verdicts) EXPECT_FALSE(v.repro.empty());
    }
}

TEST(CrashSelftest, MutationOfOneSiteAndUnknownSite) {
    const auto clean = run_campaign(named("log"), config(200));
    ASSERT_FALSE(clean.sites.empty());
    const auto m = run_mutation(named("log"), config(500), clean.sites.front().id);
    ASSERT_EQ(m.verdicts.size(), 1u);
    EXPECT_TRUE(m.verdicts.front().killed);
    EXPECT_THROW(run_mutation(named("log"), config(100), std::string("no/such.cpp:1:1")),
                 std::invalid_argument);
}

TEST(CrashSelftest, DoubleFlushesAreReported) {
    const auto r = run_campaign(named("buggy-log-wrong-line"), config(500));
    std::uint64_t redundant = 0;
    for (const auto& s : r.sites) redundant += s.redundant_flushes;
    EXPECT_GT(redundant, 0u) << "writing back a line with nothing new is a double flush";
    const auto clean = run_campaign(named("log"), config(500));
    for (const auto& s : clean.sites) EXPECT_EQ(s.redundant_flushes + s.empty_fences, 0u) << s.id;
}

TEST(CrashSelftest, RandomMomentCrashes) {
    if (under_tsan) GTEST_SKIP() << "signal-based stops are not used under TSan";
    auto c = config(3000 / scale_down, 3);
    c.moments = crash_moments::random;
    c.ops_per_thread = 2000;
    const auto clean = run_campaign(named("log"), c);
    EXPECT_EQ(clean.crash_points, c.crash_points);
    EXPECT_EQ(clean.violation_count, 0u) << (clean.violations.empty() ? "" : clean.violations.front().what);
    const auto buggy = run_campaign(named("buggy-log-no-fence"), c);
    EXPECT_GT(buggy.violation_count, 0u);
}

}  // namespace
}  // namespace ferrite::sim
