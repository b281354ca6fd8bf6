// bench/sets/set_subjects.hpp: registration of the durable sets (issue 18) as keyed
// `ferrite bench` subjects (set_subjects.cpp says what each one is).
#pragma once

#include <vector>

#include "bench/subject.hpp"

namespace ferrite::bench {

void register_set_subjects(std::vector<subject_kind>& out);

}  // namespace ferrite::bench
