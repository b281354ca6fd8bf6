// What `ferrite crashtest` prints: JSON (schema "ferrite.crashtest/1", docs/cli.md) and text,
// for a campaign and for a mutation run.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "ferrite/sim/campaign.hpp"
#include "ferrite/sim/mutation.hpp"

namespace ferrite::cli {

nlohmann::json campaign_json(const sim::campaign_result&, const sim::campaign_config&);
std::string campaign_text(const sim::campaign_result&, const sim::campaign_config&);

nlohmann::json mutation_json(const sim::mutation_result&, const sim::campaign_config&);
std::string mutation_text(const sim::mutation_result&, const sim::campaign_config&);

}  // namespace ferrite::cli
