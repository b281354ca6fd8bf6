// Flush mutation testing (see ferrite/sim/mutation.hpp).
#include "ferrite/sim/mutation.hpp"

#include <algorithm>

#include "ferrite/error.hpp"

namespace ferrite::sim {

std::size_t mutation_result::killed() const noexcept {
    return static_cast<std::size_t>(
        std::count_if(verdicts.begin(), verdicts.end(), [](const auto& v) { return v.killed; }));
}

std::vector<std::string> mutation_result::survivors() const {
    std::vector<std::string> out;
    for (const auto& v : verdicts)
        if (!v.killed) out.push_back(v.site.id);
    return out;
}

mutation_result run_mutation(const target& t, const campaign_config& cfg,
                             const std::optional<std::string>& only_site,
                             const std::function<void(const std::string&, std::size_t, std::size_t)>& on_site) {
    mutation_result out;
    campaign_config clean = cfg;
    clean.disabled_sites.clear();
    out.baseline = run_campaign(t, clean);
    if (out.baseline.violation_count > 0 && !t.seeded_bug()) {
        // The first violation and its command: a baseline that a plain campaign passes
        // (a nondeterministic violation) must still be diagnosable from this message.
        const auto& first = out.baseline.violations.front();
        throw error("target '" + std::string(t.name()) + "' has " +
                    std::to_string(out.baseline.violation_count) +
                    " violation(s) with no site switched off; fix those before mutation testing "
                    "(run `ferrite crashtest " + std::string(t.name()) + "`). The first, at crash point " +
                    std::to_string(first.crash_point) + ": " + first.what +
                    "; reproduce: " + repro_command(out.baseline, clean, first));
    }

    // One verdict per call site (an id may cover several kinds, e.g. nt_memcpy's pwb and
    // NT stores: switching the site off switches off all of them).
    std::vector<site_report> sites;
    for (const auto& s : out.baseline.sites)
        if (std::none_of(sites.begin(), sites.end(), [&](const auto& k) { return k.id == s.id; }))
            sites.push_back(s);
    out.scope = t.mutation_scope();
    if (!only_site && !out.scope.empty()) {
        const auto owned = [&](const site_report& s) {
            return std::any_of(out.scope.begin(), out.scope.end(), [&](const auto& p) { return s.id.starts_with(p); });
        };
        for (const auto& s : sites)
            if (!owned(s)) out.left_out_of_scope.push_back(s.id);
        std::erase_if(sites, [&](const auto& s) { return !owned(s); });
    }
    if (only_site) {
        std::erase_if(sites, [&](const auto& s) { return s.id != *only_site; });
        if (sites.empty())
            throw usage_error("site '" + *only_site + "' is not reached by target '" +
                              std::string(t.name()) + "'; `ferrite crashtest " + std::string(t.name()) +
                              "` lists the sites it reaches");
    }
    for (std::size_t i = 0; i < sites.size(); ++i) {
        if (on_site) on_site(sites[i].id, i, sites.size());
        campaign_config mutated = cfg;
        mutated.disabled_sites = {sites[i].id};
        mutated.stop_at_first_violation = true;
        mutated.on_progress = nullptr;
        auto r = run_campaign(t, mutated);
        site_verdict v;
        v.site = sites[i];
        v.killed = r.violation_count > 0;
        v.crash_points = r.crash_points;
        if (!r.violations.empty()) {
            v.first = r.violations.front();
            v.repro = repro_command(r, mutated, *v.first);
        }
        out.verdicts.push_back(std::move(v));
    }
    return out;
}

}  // namespace ferrite::sim
