// crash/kv/kv_ops.hpp: the memcached-style operations both ferrite-kv crash targets run
// (kv-soft, kv-cpnvm), on 12 keys "k0".."k11": set (an upsert: 8 in 20), add (3), delete (5;
// every other one a touch into the past, which removes the item as far as any reader can
// tell), get (4). Each stored value is unique to (thread, operation): its number, a colon
// and a filler whose length (0..299 bytes) and letter follow from the number, so items come
// in several block sizes and a torn or mixed-up value is seen.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine.hpp"
#include "ferrite/sim/rng.hpp"
#include "ferrite/sim/target.hpp"
#include "sets/set_history.hpp"

namespace ferrite::crash::kv_targets {

inline constexpr std::uint64_t keys = 12;
inline constexpr std::int64_t now = 1'000'000;

// Built piecewise: GCC 12 warns (-Wrestrict) on "literal" + std::string&&.
inline std::string key_of(std::uint64_t k) {
  std::string key("k");
  key += std::to_string(k);
  return key;
}

inline std::string value_of(std::uint64_t v) {
  std::string value = std::to_string(v);
  value += ':';
  value.append(v % 300, static_cast<char>('a' + v % 26));
  return value;
}

// The number a stored value encodes, or nullopt if it is not one value_of made.
inline std::optional<std::uint64_t> number_in(std::string_view value) {
  const auto colon = value.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::uint64_t v = 0;
  for (const char c : value.substr(0, colon)) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (value_of(v) != value) return std::nullopt;
  return v;
}

// Thread tid's operation i (sets_check's op: assign = set, insert = add, erase = delete or
// touch into the past, get = get).
inline sets_check::op kv_op_of(const sim::run_config& config, unsigned tid, std::uint64_t i) {
  using sets_check::op_kind;
  const auto r = sim::mix(config.seed, (std::uint64_t{tid} << 40) ^ i);
  sets_check::op o;
  o.key = (r >> 8) % keys;
  o.value = std::uint64_t{tid + 1} << 32 | (i + 1);
  const unsigned pick = static_cast<unsigned>(r % 20);
  o.kind = pick < 8 ? op_kind::assign : pick < 11 ? op_kind::insert : pick < 16 ? op_kind::erase : op_kind::get;
  return o;
}

// Runs operation o on the engine; `cas` receives the CAS id a store handed out.
inline sets_check::response run_kv_op(kv::engine& e, const sets_check::op& o, std::uint64_t& cas) {
  using sets_check::op_kind;
  const std::string key = key_of(o.key);
  const std::string value = value_of(o.value);
  switch (o.kind) {
    case op_kind::assign: {
      const auto out = e.store({kv::store_mode::set, key, value, 0, 0, 0}, now);
      cas = out.cas;
      return {!out.replaced, {}};
    }
    case op_kind::insert: {
      const auto out = e.store({kv::store_mode::add, key, value, 0, 0, 0}, now);
      cas = out.cas;
      return {out.result == kv::store_result::stored, {}};
    }
    case op_kind::erase:
      if (o.value % 2 == 0) return {e.touch(key, now - 1, now) == kv::touch_result::touched, {}};
      return {e.remove(key, 0, now) == kv::remove_result::deleted, {}};
    default: {
      std::optional<std::uint64_t> seen;
      e.get(key, now, std::nullopt, [&](const kv::item_view& item) { seen = number_in(item.value).value_or(0); });
      return {false, seen};
    }
  }
}

}  // namespace ferrite::crash::kv_targets
