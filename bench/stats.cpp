// bench/stats.cpp: median / min / max of repeated measurements (see stats.hpp).
#include "bench/stats.hpp"

#include <algorithm>
#include <vector>

namespace ferrite::bench {

spread summarize(std::span<const double> values) {
    if (values.empty()) return {};
    std::vector<double> v(values.begin(), values.end());
    std::sort(v.begin(), v.end());
    const auto n = v.size();
    const double median = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    return {median, v.front(), v.back()};
}

}  // namespace ferrite::bench
