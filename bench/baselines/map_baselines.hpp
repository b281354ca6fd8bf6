// bench/baselines/map_baselines.hpp: the volatile, lock-based maps every keyed structure is
// compared with (issue 17: registered before any persistent map exists, so the first family
// of durable sets and maps has its baselines on day one).
//
//   map-mutex          std::unordered_map<uint64_t, uint64_t>, every operation under one
//                      std::mutex; no scan (an unordered map has no key order), so it
//                      runs every keyed workload but ycsb-e
//   ordered-map-mutex  std::map<uint64_t, uint64_t> under one std::shared_mutex: contains,
//                      get and scan (lower_bound, then up to count keys in order) shared,
//                      insert, erase and put exclusive
// Nothing is persisted: their pwb/op and pfence/op are 0 (counted, ferrite/pmem is unused).
#pragma once

#include <vector>

#include "bench/subject.hpp"

namespace ferrite::bench {

subject_kind map_mutex_kind();
subject_kind ordered_map_mutex_kind();

// Adds both to the registry.
void register_map_baselines(std::vector<subject_kind>& out);

}  // namespace ferrite::bench
