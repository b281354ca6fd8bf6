// bench/latency_histogram.hpp: a log-bucketed histogram of operation latencies (ns).
//
// The layout is HdrHistogram's (Gil Tene), written here from its description: values below
// sub_bucket_count (2048) are counted exactly; above, bucket b (b >= 1) covers
// [1024 * 2^b, 2048 * 2^b) in 1024 sub-buckets of width 2^b, so every recorded value is
// known to within 1/1024 of itself (HdrHistogram's "3 significant digits"). The counts of
// bucket 0 and the upper halves of buckets 1.. lie in one flat array. Values above
// highest_trackable (2^36 ns, about 69 s) are counted as that value.
//
// Each bench worker records into its own histogram (no sharing in the timed region); the
// harness merges them with merge() at the end. value_at_percentile(p) follows the
// nearest-rank definition: the smallest recorded value v such that at least ceil(p/100 * n)
// samples are <= v, reported as the highest value equivalent to v in this layout (so it is
// >= the exact sample and within 1/1024 of it).
#pragma once

#include <cstdint>
#include <vector>

namespace ferrite::bench {

class latency_histogram {
public:
    static constexpr unsigned sub_bucket_bits = 11;  // sub_bucket_count = 2048
    static constexpr std::uint64_t sub_bucket_count = std::uint64_t{1} << sub_bucket_bits;
    static constexpr std::uint64_t sub_bucket_half = sub_bucket_count / 2;
    static constexpr unsigned highest_bits = 36;
    static constexpr std::uint64_t highest_trackable = (std::uint64_t{1} << highest_bits) - 1;

    latency_histogram();

    void record(std::uint64_t value_ns) noexcept { ++counts_[index_of(value_ns)], ++total_; }
    void record_n(std::uint64_t value_ns, std::uint64_t n) noexcept {
        counts_[index_of(value_ns)] += n, total_ += n;
    }
    void merge(const latency_histogram& other) noexcept;
    void clear() noexcept;

    std::uint64_t count() const noexcept { return total_; }
    // 0 for an empty histogram; p in [0, 100].
    std::uint64_t value_at_percentile(double p) const noexcept;

    // The layout, public for the tests.
    static std::size_t index_of(std::uint64_t value) noexcept;
    static std::uint64_t lowest_equivalent(std::size_t index) noexcept;
    static std::uint64_t highest_equivalent(std::size_t index) noexcept;
    static std::size_t counts_length() noexcept;

private:
    std::vector<std::uint64_t> counts_;
    std::uint64_t total_ = 0;
};

}  // namespace ferrite::bench
