#include "workload.hpp"

#include <algorithm>
#include <cmath>

namespace ferrite::kv::load {

namespace {
__extension__ typedef unsigned __int128 uint128;  // GCC and Clang; __extension__ keeps -Wpedantic quiet
}  // namespace

workload::workload(std::uint64_t keys, double zipf, double get_ratio, std::size_t value_bytes)
    : keys_(keys),
      get_threshold_(static_cast<std::uint64_t>(std::clamp(get_ratio, 0.0, 1.0) * 0x1.0p53)),
      value_(value_bytes, 'a') {
  for (std::size_t i = 0; i < value_bytes; ++i) value_[i] = static_cast<char>('a' + i % 26);
  if (zipf > 0) {
    zipf_cdf_.resize(keys);
    double sum = 0;
    for (std::uint64_t n = 0; n < keys; ++n) {
      sum += 1.0 / std::pow(static_cast<double>(n + 1), zipf);
      zipf_cdf_[n] = sum;
    }
    for (double& c : zipf_cdf_) c /= sum;
    zipf_cdf_.back() = 1.0;  // no rounding gap above the last key
  }
}

std::uint64_t workload::next_key(random_source& random) const noexcept {
  if (zipf_cdf_.empty())
    return static_cast<std::uint64_t>((static_cast<uint128>(random.next()) * keys_) >> 64);
  // The first key whose cumulative probability exceeds u: key n with probability p(n).
  const double u = random.unit();
  return static_cast<std::uint64_t>(std::upper_bound(zipf_cdf_.begin(), zipf_cdf_.end(), u) - zipf_cdf_.begin());
}

}  // namespace ferrite::kv::load
