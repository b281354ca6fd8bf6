// bench/containers/pfc_subjects.hpp: registration of the stack, queue and deque subjects on
// PFC and FPFC (the vector's are in vector_subjects.hpp).
#pragma once

#include <vector>

#include "bench/subject.hpp"

namespace ferrite::bench {

void register_pfc_subjects(std::vector<subject_kind>& out);

}  // namespace ferrite::bench
