// bench/baselines/set_baselines.hpp: the baselines of the durable sets and maps (issue 18),
// keyed subjects of `ferrite bench`:
//
//   logfree-list  the log-free durable linked list of David et al. (USENIX ATC 2018):
//                 links persisted with link-and-persist and the link cache (logfree_set.hpp)
//   logfree-hash  the log-free hash set: a fixed array of such lists, one bucket per key of
//                 --keys (load factor 1, as in the paper's evaluation)
//   pmdk-hash     a libpmemobj transactional chained hash map, fixed bucket count from
//                 --keys, one PMDK transaction per update under a per-bucket lock
//                 (pmdk_hash.hpp)
//
// The log-free ones persist through ferrite/pmem (pwb/op and pfence/op are counted); PMDK
// flushes through libpmem (reported as unknown, like the other PMDK baselines). Sets support
// insert, erase, contains and get (get returns the value stored by the insert); pmdk-hash
// also supports put (upsert), so it runs the YCSB A and B workloads too.
#pragma once

#include <vector>

#include "bench/subject.hpp"

namespace ferrite::bench {

subject_kind logfree_list_kind();
subject_kind logfree_hash_kind();
subject_kind pmdk_hash_kind();

// Adds the three to the registry.
void register_set_baselines(std::vector<subject_kind>& out);

}  // namespace ferrite::bench
