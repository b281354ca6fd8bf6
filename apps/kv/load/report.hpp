// ferrite-kv-load's result: one JSON object (nlohmann-json) with the settings that shaped the
// run, the counts, throughput over the measured window and latency percentiles in
// microseconds (histogram.hpp: each at most 0.78% above the true value; max exact).
//
//   {"ops_per_second": 81234.5, "ops": 406172, "gets": ..., "sets": ..., "hits": ..., "misses": ...,
//    "errors": 0, "latency_us": {"p50": .., "p90": .., "p99": .., "p999": .., "max": .., "mean": ..},
//    "get_latency_us": {...}, "set_latency_us": {...}, "error_samples": [...], settings...}
#pragma once

#include "options.hpp"
#include "tally.hpp"

#include <nlohmann/json.hpp>

namespace ferrite::kv::load {

// The latency summary of one histogram of nanoseconds, in microseconds.
nlohmann::ordered_json latency_summary(const histogram& nanoseconds);

nlohmann::ordered_json make_report(const load_options& options, const tally& total, double prefill_seconds,
                           double measured_seconds);

}  // namespace ferrite::kv::load
