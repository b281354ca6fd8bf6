// bench/stats.hpp: summary statistics of repeated measurements.
//
// A benchmark point is run several times and reported as the median with the min and max
// beside it: the median is robust to one repetition that a noisy neighbour slowed down, and
// min/max show how far the repetitions spread. An even count takes the mean of the two
// middle values.
#pragma once

#include <span>

namespace ferrite::bench {

struct spread {
    double median = 0;
    double min = 0;
    double max = 0;
};

// Median, min and max of the values; all zero for an empty span.
spread summarize(std::span<const double> values);

}  // namespace ferrite::bench
