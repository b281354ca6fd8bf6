// bench/containers/vector_subjects.hpp: registration of the vector subjects.
#pragma once

#include <vector>

#include "bench/subject.hpp"

namespace ferrite::bench {

void register_vector_subjects(std::vector<subject_kind>& out);

}  // namespace ferrite::bench
