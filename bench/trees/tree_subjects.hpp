// bench/trees/tree_subjects.hpp: registration of the B+-tree subjects of issue 19 as keyed
// `ferrite bench` subjects (tree_subjects.cpp says what each one is).
#pragma once

#include <vector>

#include "bench/subject.hpp"

namespace ferrite::bench {

void register_tree_subjects(std::vector<subject_kind>& out);

}  // namespace ferrite::bench
