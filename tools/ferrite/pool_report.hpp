// What `ferrite pool info` prints, as JSON (schema "ferrite.pool-info/1", documented in
// docs/cli.md) and as text. Shared by `pool info` and `demo`.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "ferrite/pmem/pool.hpp"

namespace ferrite::cli {

nlohmann::json pool_info_json(const pmem::pool& p);
std::string pool_info_text(const nlohmann::json& info);

}  // namespace ferrite::cli
