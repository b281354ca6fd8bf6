// Pieces of the memcached text protocol shared by the classic and the meta commands: splitting
// a request line into tokens, strict number parsing (no sign where none is allowed, no spaces,
// no trailing junk, no overflow), and the error replies as memcached words them.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ferrite::kv::wire {

inline constexpr std::string_view error = "ERROR\r\n";
inline constexpr std::string_view bad_format = "CLIENT_ERROR bad command line format\r\n";
inline constexpr std::string_view bad_chunk = "CLIENT_ERROR bad data chunk\r\n";
inline constexpr std::string_view line_too_long = "CLIENT_ERROR line too long\r\n";
inline constexpr std::string_view too_large = "SERVER_ERROR object too large for cache\r\n";
inline constexpr std::string_view out_of_memory = "SERVER_ERROR out of memory storing object\r\n";
inline constexpr std::string_view non_numeric =
    "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n";
inline constexpr std::string_view bad_delta = "CLIENT_ERROR invalid numeric delta argument\r\n";
inline constexpr std::string_view bad_exptime = "CLIENT_ERROR invalid exptime argument\r\n";
inline constexpr std::string_view invalid_flag = "CLIENT_ERROR invalid flag\r\n";

// Splits on spaces (runs of them count as one), as memcached's tokenizer does.
inline void tokenize(std::string_view line, std::vector<std::string_view>& tokens) {
  tokens.clear();
  std::size_t pos = 0;
  while (pos < line.size()) {
    while (pos < line.size() && line[pos] == ' ') ++pos;
    const std::size_t start = pos;
    while (pos < line.size() && line[pos] != ' ') ++pos;
    if (pos > start) tokens.push_back(line.substr(start, pos - start));
  }
}

template <typename T>
[[nodiscard]] std::optional<T> number(std::string_view text) {
  if (text.empty()) return std::nullopt;
  T value{};
  const auto [end, failure] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (failure != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// memcached's keys: 1..250 bytes, no control characters or spaces (the tokenizer removed spaces).
[[nodiscard]] inline bool valid_key(std::string_view key) {
  if (key.empty() || key.size() > 250) return false;
  for (const char c : key) {
    if (static_cast<unsigned char>(c) < 0x21 || c == 0x7f) return false;
  }
  return true;
}

inline void append_number(std::string& out, std::uint64_t value) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  out.append(digits, end);
}

inline void append_signed(std::string& out, std::int64_t value) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  out.append(digits, end);
}

}  // namespace ferrite::kv::wire
