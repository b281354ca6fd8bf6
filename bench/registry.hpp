// bench/registry.hpp: the structures `ferrite bench` can measure, by name.
//
// The list is built once, on first use, by register_builtin_subjects() (registry.cpp): an
// explicit list of calls, one per group of structures, so the order of `--list` is fixed and
// no static initialiser runs before main. To add a structure, write a
// `void register_<group>_subjects(std::vector<subject_kind>&)` next to it and call it from
// register_builtin_subjects(); a map or set sets `family = op_family::keyed` in its
// subject_kind (subject.hpp) and is then listed, and runs, with the keyed workloads and
// against the keyed baselines (bench/baselines/map_baselines.hpp).
#pragma once

#include <string_view>
#include <vector>

#include "bench/subject.hpp"

namespace ferrite::bench {

// Every registered structure, in registration order.
const std::vector<subject_kind>& subjects();

// nullptr if no structure has that name.
const subject_kind* find_subject(std::string_view name);

// Appends every built-in structure to `out` (the one place that knows them all).
void register_builtin_subjects(std::vector<subject_kind>& out);

}  // namespace ferrite::bench
