// bench/baselines/register_baselines.cpp: registration of the baselines of baselines.hpp.
#include "bench/baselines/baselines.hpp"

namespace ferrite::bench {

void register_pmdk_subjects(std::vector<subject_kind>& out) {
    out.push_back(pmdk_vector_kind());
    out.push_back(pmdk_stack_kind());
    out.push_back(pmdk_queue_kind());
}

}  // namespace ferrite::bench
