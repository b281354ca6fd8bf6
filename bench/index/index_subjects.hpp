// bench/index/index_subjects.hpp: registration of the ordered index of issue 21 (index/) as
// keyed `ferrite bench` subjects (index_subjects.cpp says what each one is).
#pragma once

#include <vector>

#include "bench/subject.hpp"

namespace ferrite::bench {

void register_index_subjects(std::vector<subject_kind>& out);

}  // namespace ferrite::bench
