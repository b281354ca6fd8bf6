// What ferrite-kv-load asks for: the operation (get with probability get_ratio, else set), the
// key (uniform over the key space, or Zipf), the key's text `key:<n>` and the value bytes.
//
// One `workload` is built before the threads start and only read afterwards; each thread draws
// from its own `random_source` (splitmix64: one add and three multiply-xorshifts per number,
// statistically good enough for choosing keys, and it never allocates).
//
// Uniform keys use Lemire's multiply-high (`(r * keys) >> 64`): no division, and a bias below
// keys / 2^64. Zipf keys (exponent s: key n is chosen with probability proportional to
// 1 / (n + 1)^s, key:0 the hottest) look a uniform number up in a cumulative table of the
// probabilities, built once: 8 bytes per key and a binary search per request, simple to check.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ferrite::kv::load {

enum class op : std::uint8_t { get, set };

class random_source {
 public:
  explicit random_source(std::uint64_t seed) noexcept : state_(seed) {}
  std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 bits.
  double unit() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t state_;
};

// Room for "key:" and the digits of any 64-bit number.
inline constexpr std::size_t max_key_text = 4 + 20;

// Writes `key:<n>` into `buffer` and returns a view of it.
inline std::string_view key_text(std::uint64_t n, char (&buffer)[max_key_text]) noexcept {
  buffer[0] = 'k', buffer[1] = 'e', buffer[2] = 'y', buffer[3] = ':';
  const auto result = std::to_chars(buffer + 4, buffer + max_key_text, n);
  return {buffer, static_cast<std::size_t>(result.ptr - buffer)};
}

class workload {
 public:
  workload(std::uint64_t keys, double zipf, double get_ratio, std::size_t value_bytes);

  op next_op(random_source& random) const noexcept {
    return (random.next() >> 11) < get_threshold_ ? op::get : op::set;
  }
  std::uint64_t next_key(random_source& random) const noexcept;

  std::uint64_t keys() const noexcept { return keys_; }
  // The bytes every set stores (letters, so a dump of the stream stays readable).
  std::string_view value() const noexcept { return value_; }

 private:
  std::uint64_t keys_;
  std::uint64_t get_threshold_;  // get when the top 53 bits of a random number are below it
  std::vector<double> zipf_cdf_;  // empty: uniform
  std::string value_;
};

}  // namespace ferrite::kv::load
