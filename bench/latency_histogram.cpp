// bench/latency_histogram.cpp: HdrHistogram-layout latency histogram (see the header).
#include "bench/latency_histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace ferrite::bench {
namespace {

constexpr unsigned half_bits = latency_histogram::sub_bucket_bits - 1;  // log2(sub_bucket_half)
// The bucket of the highest trackable value: its most significant bit minus half_bits.
constexpr unsigned last_bucket = latency_histogram::highest_bits - 1 - half_bits;

}  // namespace

latency_histogram::latency_histogram() : counts_(counts_length(), 0) {}

std::size_t latency_histogram::counts_length() noexcept {
    // Bucket 0 holds sub_bucket_count values; each bucket b >= 1 adds sub_bucket_half.
    return static_cast<std::size_t>((last_bucket + 2) * sub_bucket_half);
}

std::size_t latency_histogram::index_of(std::uint64_t value) noexcept {
    const std::uint64_t v = std::min(value, highest_trackable);
    if (v < sub_bucket_count) return static_cast<std::size_t>(v);
    // Bucket b covers [sub_bucket_half << b, sub_bucket_count << b) in steps of 2^b; its
    // sub-bucket (v >> b) lies in [sub_bucket_half, sub_bucket_count).
    const auto b = static_cast<unsigned>(std::bit_width(v) - 1) - half_bits;
    return static_cast<std::size_t>(std::uint64_t{b} * sub_bucket_half + (v >> b));
}

std::uint64_t latency_histogram::lowest_equivalent(std::size_t index) noexcept {
    if (index < sub_bucket_count) return index;
    const auto b = static_cast<unsigned>(index / sub_bucket_half - 1);
    const std::uint64_t sub = index - std::uint64_t{b} * sub_bucket_half;
    return sub << b;
}

std::uint64_t latency_histogram::highest_equivalent(std::size_t index) noexcept {
    if (index < sub_bucket_count) return index;
    const auto b = static_cast<unsigned>(index / sub_bucket_half - 1);
    return lowest_equivalent(index) + (std::uint64_t{1} << b) - 1;
}

void latency_histogram::merge(const latency_histogram& other) noexcept {
    for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
    total_ += other.total_;
}

void latency_histogram::clear() noexcept {
    std::fill(counts_.begin(), counts_.end(), 0);
    total_ = 0;
}

std::uint64_t latency_histogram::value_at_percentile(double p) const noexcept {
    if (total_ == 0) return 0;
    const double clamped = std::clamp(p, 0.0, 100.0);
    // Nearest rank: ceil(p/100 * n), at least 1. The relative nudge keeps 99.9 % of 1000
    // samples at rank 999 whatever the rounding of 99.9 in binary.
    const double exact = clamped / 100.0 * static_cast<double>(total_);
    auto rank = static_cast<std::uint64_t>(std::ceil(exact - exact * 1e-12));
    rank = std::clamp<std::uint64_t>(rank, 1, total_);
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < counts_.size(); ++i) {
        seen += counts_[i];
        if (seen >= rank) return highest_equivalent(i);
    }
    return highest_trackable;
}

}  // namespace ferrite::bench
