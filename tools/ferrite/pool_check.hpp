// What `ferrite pool check` finds, as JSON (schema "ferrite.pool-check/1", documented in
// docs/cli.md) and as text.
//
// "Consistent" means that ferrite::store::open (and pool::open + catalog::recover_pool)
// succeeds on this file, and every named object opens: the check runs that same recovery on
// a copy-on-write mapping of the file (nothing reaches the file), then validates every named
// object and the heap after it. The header was validated by opening the pool.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "ferrite/pmem/pool.hpp"

namespace ferrite::cli {

nlohmann::json pool_check_json(const pmem::pool& p);
std::string pool_check_text(const nlohmann::json& check);

}  // namespace ferrite::cli
