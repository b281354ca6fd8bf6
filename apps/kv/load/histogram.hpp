// A log-linear latency histogram (the HdrHistogram idea, cut down to what ferrite-kv-load
// needs): every value of a 64-bit range, one counter array allocated up front, so recording is
// two shifts, an add and a compare, with no allocation, and one worker thread's histogram is
// merged into another's by adding counters.
//
// Layout. Values below 2^(sub_bits + 1) = 256 (nanoseconds here) get a bucket each. Above,
// every power of two [2^k, 2^(k+1)) is cut into 2^sub_bits = 128 equal buckets of width
// 2^(k - sub_bits), so a bucket is never wider than 1/128 (0.78%) of the values in it. With
// e = max(0, bit_width(v) - (sub_bits + 1)), the bucket of v is (e << sub_bits) + (v >> e):
// for e = 0 that is v itself, and each e adds 128 buckets after the last ones. The largest
// 64-bit value lands in bucket 7423, so 7424 counters (58 KiB) cover everything and nothing is
// ever clamped.
//
// Reading. `value_at(q)` is the upper bound of the bucket that holds the ceil(q * count)-th
// smallest value, capped at the largest value recorded: an answer never below the true
// quantile and at most 0.78% above it. `max()` and `min()` are exact.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace ferrite::kv::load {

class histogram {
 public:
  static constexpr unsigned sub_bits = 7;
  static constexpr std::size_t bucket_count = ((64 - sub_bits - 1) << sub_bits) + (std::size_t{1} << (sub_bits + 1));

  // The bucket that counts `value`.
  static constexpr std::size_t bucket_of(std::uint64_t value) noexcept {
    const auto width = static_cast<unsigned>(std::bit_width(value));
    const unsigned shift = width > sub_bits + 1 ? width - (sub_bits + 1) : 0u;
    return (std::size_t{shift} << sub_bits) + static_cast<std::size_t>(value >> shift);
  }
  // The smallest and the largest value that bucket `index` counts.
  static constexpr std::uint64_t bucket_low(std::size_t index) noexcept {
    if (index < (std::size_t{1} << (sub_bits + 1))) return index;
    const unsigned shift = static_cast<unsigned>(index >> sub_bits) - 1;
    return static_cast<std::uint64_t>(index - (std::size_t{shift} << sub_bits)) << shift;
  }
  static constexpr std::uint64_t bucket_high(std::size_t index) noexcept {
    if (index < (std::size_t{1} << (sub_bits + 1))) return index;
    const unsigned shift = static_cast<unsigned>(index >> sub_bits) - 1;
    return bucket_low(index) + ((std::uint64_t{1} << shift) - 1);
  }

  void record(std::uint64_t value) noexcept {
    ++counts_[bucket_of(value)];
    ++count_;
    sum_ += value;
    if (value > max_) max_ = value;
    if (value < min_) min_ = value;
  }

  // Adds `other`'s values to this one (the workers' histograms are merged at the end).
  void merge(const histogram& other) noexcept;

  // The value at quantile q (0 < q <= 1): see the header comment. 0 when nothing was recorded.
  std::uint64_t value_at(double q) const noexcept;

  std::uint64_t count() const noexcept { return count_; }
  std::uint64_t max() const noexcept { return max_; }
  std::uint64_t min() const noexcept { return count_ == 0 ? 0 : min_; }
  double mean() const noexcept { return count_ == 0 ? 0.0 : static_cast<double>(sum_) / static_cast<double>(count_); }

 private:
  std::array<std::uint64_t, bucket_count> counts_{};
  std::uint64_t count_ = 0;
  std::uint64_t sum_ = 0;  // wraps only after 584 years of nanoseconds
  std::uint64_t max_ = 0;
  std::uint64_t min_ = UINT64_MAX;
};

static_assert(histogram::bucket_of(UINT64_MAX) == histogram::bucket_count - 1,
              "the last bucket must hold the largest value: recompute bucket_count from sub_bits");

}  // namespace ferrite::kv::load
