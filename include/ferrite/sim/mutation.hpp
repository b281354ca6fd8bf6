// ferrite/sim/mutation.hpp: flush mutation testing.
//
// For every persistence call site a clean campaign of the target reaches (within the
// target's mutation_scope(), see target.hpp), run the campaign
// again with that one site switched off (its pwb, fence or NT store does nothing). The
// campaign must find a violation: the site is *killed*. A site that *survives* is either a
// redundant flush (remove it, and the campaign proves the removal safe) or a hole in the
// target's checker or workload (strengthen them). Mutation campaigns stop at their first
// violation, so killed sites are cheap and survivors cost the full budget.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ferrite/sim/campaign.hpp"

namespace ferrite::sim {

struct site_verdict {
    site_report site;                 // from the clean campaign
    bool killed = false;
    std::uint64_t crash_points = 0;   // spent on this site
    std::optional<violation> first;   // the violation that killed it
    std::string repro;                // command rebuilding it
};

struct mutation_result {
    campaign_result baseline;  // the clean campaign (must have no violation)
    std::vector<site_verdict> verdicts;
    std::vector<std::string> scope;              // the target's mutation_scope()
    std::vector<std::string> left_out_of_scope;  // sites reached, owned by other targets
    std::size_t killed() const noexcept;
    std::vector<std::string> survivors() const;
};

// `only_site`: test that one site instead of all. on_site is called before each site.
mutation_result run_mutation(const target&, const campaign_config&,
                             const std::optional<std::string>& only_site = std::nullopt,
                             const std::function<void(const std::string& site, std::size_t index,
                                                      std::size_t total)>& on_site = {});

}  // namespace ferrite::sim
