// bench/containers/dfc_subjects.hpp: registration of the DFC subjects (dfc-stack,
// dfc-queue, dfc-deque).
#pragma once

#include <vector>

#include "bench/subject.hpp"

namespace ferrite::bench {

void register_dfc_subjects(std::vector<subject_kind>& out);

}  // namespace ferrite::bench
