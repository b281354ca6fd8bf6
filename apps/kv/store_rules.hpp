// memcached's rules for whether a store may happen, given the key's live item (if any): the
// one place both engines ask, so they cannot drift apart.
//   cas of a missing key         -> NOT_FOUND
//   a compare CAS that differs   -> EXISTS (cas, and meta's C flag in any mode)
//   add over a live key          -> NOT_STORED
//   replace/append/prepend of a missing key -> NOT_STORED
#pragma once

#include "engine.hpp"

#include <optional>

namespace ferrite::kv {

// nullopt: go ahead and store; otherwise the reply that refuses it.
[[nodiscard]] inline std::optional<store_result> store_refusal(const store_request& request, bool present,
                                                               std::uint64_t present_cas) {
  if (request.mode == store_mode::cas && !present) return store_result::not_found;
  if (request.compare_cas != 0 && present && present_cas != request.compare_cas) return store_result::exists;
  switch (request.mode) {
    case store_mode::add:
      return present ? std::optional(store_result::not_stored) : std::nullopt;
    case store_mode::replace:
    case store_mode::append:
    case store_mode::prepend:
      return present ? std::nullopt : std::optional(store_result::not_stored);
    case store_mode::set:
    case store_mode::cas:
      break;
  }
  return std::nullopt;
}

}  // namespace ferrite::kv
