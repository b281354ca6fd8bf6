// incr/decr on a stored value, as memcached does it: the value must be a decimal number of at
// most 20 digits that fits 64 bits; incr wraps around at 2^64, decr stops at 0.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ferrite::kv {

[[nodiscard]] inline std::optional<std::uint64_t> parse_counter(std::string_view text) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

[[nodiscard]] constexpr std::uint64_t apply_delta(std::uint64_t value, bool increment, std::uint64_t delta) {
  if (increment) return value + delta;  // unsigned: wraps at 2^64 like memcached
  return delta > value ? 0 : value - delta;
}

}  // namespace ferrite::kv
