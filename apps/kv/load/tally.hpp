// What one worker thread counts, merged into one record at the end. Operations and latencies
// count only replies that completed inside the measured window; errors count whenever they
// happen (prefill and warm-up included), and the first few are kept as text for the report.
#pragma once

#include "histogram.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ferrite::kv::load {

struct tally {
  static constexpr std::size_t kept_errors = 8;

  std::uint64_t gets = 0;
  std::uint64_t sets = 0;
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t prefill_sets = 0;
  std::uint64_t errors = 0;
  std::uint64_t connections_lost = 0;
  histogram latency;      // every measured request, nanoseconds from send to complete reply
  histogram get_latency;
  histogram set_latency;
  std::vector<std::string> error_samples;

  void error(std::string what) {
    ++errors;
    if (error_samples.size() < kept_errors) error_samples.push_back(std::move(what));
  }

  void merge(const tally& other) {
    gets += other.gets;
    sets += other.sets;
    hits += other.hits;
    misses += other.misses;
    prefill_sets += other.prefill_sets;
    errors += other.errors;
    connections_lost += other.connections_lost;
    latency.merge(other.latency);
    get_latency.merge(other.get_latency);
    set_latency.merge(other.set_latency);
    for (const std::string& e : other.error_samples)
      if (error_samples.size() < kept_errors) error_samples.push_back(e);
  }
};

}  // namespace ferrite::kv::load
