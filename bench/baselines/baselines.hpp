// bench/baselines/baselines.hpp: the comparison structures `ferrite bench` ships with.
//
//   vector-pmdk  libpmemobj transactional vector (array + size), one std::mutex
//   stack-pmdk   libpmemobj transactional linked stack, one std::mutex
//   queue-pmdk   libpmemobj transactional linked queue, one std::mutex
//
// libpmemobj transactions belong to one thread and do not isolate concurrent ones, so each
// structure is locked as a whole: one transaction per operation under the mutex. This is the
// "PMDK" line of the PFC thesis' plots, built from PMDK's C API (docs: pmemobj_tx_begin(3)).
#pragma once

#include <vector>

#include "bench/subject.hpp"

namespace ferrite::bench {

subject_kind pmdk_vector_kind();
subject_kind pmdk_stack_kind();
subject_kind pmdk_queue_kind();

// Adds the three PMDK baselines to the registry.
void register_pmdk_subjects(std::vector<subject_kind>& out);

}  // namespace ferrite::bench
