#include "histogram.hpp"

#include <algorithm>
#include <cmath>

namespace ferrite::kv::load {

void histogram::merge(const histogram& other) noexcept {
  for (std::size_t i = 0; i < bucket_count; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  max_ = std::max(max_, other.max_);
  min_ = std::min(min_, other.min_);
}

std::uint64_t histogram::value_at(double q) const noexcept {
  if (count_ == 0) return 0;
  // The rank of the value asked for: the ceil(q * count)-th smallest, at least the first.
  const double wanted = std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(count_));
  const std::uint64_t rank = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(wanted), 1, count_);
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < bucket_count; ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::min(bucket_high(i), max_);
  }
  return max_;  // not reached: the counters add up to count_
}

}  // namespace ferrite::kv::load
