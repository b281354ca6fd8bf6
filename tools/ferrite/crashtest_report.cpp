#include "crashtest_report.hpp"

#include <cstdio>
#include <sstream>

namespace ferrite::cli {
namespace {

std::string moments_name(sim::crash_moments m) {
    return m == sim::crash_moments::events ? "events" : "random";
}

nlohmann::json site_json(const sim::site_report& s) {
    return {{"id", s.id},
            {"kind", std::string(sim::to_string(s.kind))},
            {"function", s.function},
            {"calls", s.calls},
            {"double_flushes", s.redundant_flushes},
            {"empty_fences", s.empty_fences}};
}

// The fields every crashtest JSON object starts with.
nlohmann::json campaign_header(const char* schema, const sim::campaign_result& r,
                               const sim::campaign_config& cfg) {
    return {{"schema", schema},
            {"target", r.target},
            {"threads", r.threads},
            {"ops_per_thread", r.ops_per_thread},
            {"moments", moments_name(r.moments)},
            {"seed", cfg.seed},
            {"crash_points", r.crash_points},
            {"violations", r.violation_count}};
}

std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f s", s);
    return buf;
}

void sites_table(std::ostringstream& o, const std::vector<sim::site_report>& sites) {
    o << "persistence sites reached (" << sites.size() << "):\n";
    for (const auto& s : sites) {
        o << "  " << s.id << "  " << sim::to_string(s.kind) << "  calls " << s.calls;
        if (s.redundant_flushes) o << "  double flushes " << s.redundant_flushes;
        if (s.empty_fences) o << "  empty fences " << s.empty_fences;
        o << '\n';
    }
}

}  // namespace

nlohmann::json campaign_json(const sim::campaign_result& r, const sim::campaign_config& cfg) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& v : r.violations)
        list.push_back({{"crash_point", v.crash_point},
                        {"run_seed", v.run_seed},
                        {"event", v.event},
                        {"recovery_event", v.recovery_event ? nlohmann::json(*v.recovery_event) : nlohmann::json(nullptr)},
                        {"what", v.what},
                        {"repro", sim::repro_command(r, cfg, v)}});
    nlohmann::json sites = nlohmann::json::array();
    for (const auto& s : r.sites) sites.push_back(site_json(s));
    auto j = campaign_header("ferrite.crashtest/1", r, cfg);
    j["recovery_crashes"] = r.recovery_crashes;
    j["runs"] = r.runs;
    j["events"] = r.events;
    j["violation_list"] = std::move(list);
    j["sites"] = r.sites.size();
    j["site_list"] = std::move(sites);
    j["seconds"] = r.seconds;
    return j;
}

std::string campaign_text(const sim::campaign_result& r, const sim::campaign_config& cfg) {
    std::ostringstream o;
    o << "crashtest " << r.target << ": " << r.crash_points << " crash points in " << r.runs
      << " run(s) of " << r.threads << " thread(s) x " << r.ops_per_thread << " ops ("
      << moments_name(r.moments) << " mode, " << r.events << " persistence events), "
      << r.recovery_crashes << " with recovery crashed too; " << r.violation_count
      << " violation(s); " << seconds_text(r.seconds) << '\n';
    sites_table(o, r.sites);
    for (const auto& v : r.violations) {
        o << "VIOLATION at crash point " << v.crash_point;
        if (v.recovery_event) o << " (recovery crashed at its event " << *v.recovery_event << ")";
        o << ": " << v.what << "\n  reproduce: " << sim::repro_command(r, cfg, v) << '\n';
    }
    if (r.violation_count > r.violations.size())
        o << "(" << r.violation_count - r.violations.size() << " more violations not shown)\n";
    return o.str();
}

nlohmann::json mutation_json(const sim::mutation_result& m, const sim::campaign_config& cfg) {
    nlohmann::json verdicts = nlohmann::json::array();
    for (const auto& v : m.verdicts) {
        auto j = site_json(v.site);
        j["killed"] = v.killed;
        j["crash_points"] = v.crash_points;
        j["violation"] = v.first ? nlohmann::json(v.first->what) : nlohmann::json(nullptr);
        j["repro"] = v.repro.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.repro);
        verdicts.push_back(std::move(j));
    }
    auto j = campaign_header("ferrite.crashtest-mutation/1", m.baseline, cfg);
    j["sites"] = m.verdicts.size();
    j["killed"] = m.killed();
    j["survivors"] = m.survivors();
    j["scope"] = m.scope;
    j["left_out_of_scope"] = m.left_out_of_scope;
    j["verdicts"] = std::move(verdicts);
    return j;
}

std::string mutation_text(const sim::mutation_result& m, const sim::campaign_config& cfg) {
    std::ostringstream o;
    const auto& b = m.baseline;
    o << "flush mutation testing of " << b.target << ": clean campaign " << b.crash_points
      << " crash points, " << b.violation_count << " violation(s); up to " << cfg.crash_points
      << " crash points per switched-off site\n";
    if (!m.scope.empty()) {
        o << "  scope: sites under";
        for (const auto& p : m.scope) o << ' ' << p;
        o << "; " << m.left_out_of_scope.size() << " other site(s) reached are tested by their own targets\n";
    }
    for (const auto& v : m.verdicts) {
        o << "  " << (v.killed ? "killed  " : "SURVIVED") << "  " << v.site.id << "  "
          << sim::to_string(v.site.kind);
        if (v.killed)
            o << "  after " << v.crash_points << " crash point(s): " << v.first->what
              << "\n            reproduce: " << v.repro;
        else
            o << "  no violation in " << v.crash_points
              << " crash points: a redundant flush, or a hole in the checker";
        o << '\n';
    }
    const auto n = m.verdicts.size();
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.0f%%", n ? 100.0 * static_cast<double>(m.killed()) / static_cast<double>(n) : 100.0);
    o << m.killed() << "/" << n << " sites killed (kill rate " << rate << ")\n";
    return o.str();
}

}  // namespace ferrite::cli
