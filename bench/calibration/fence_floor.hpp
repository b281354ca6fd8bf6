// bench/calibration/fence_floor.hpp: the fence floor, what one persisted pass costs on this
// machine and backend with nothing else in it, as `ferrite bench` structures:
//
//   fence-floor     every operation: store to 1 line, pwb it, one pfence
//   fence-floor-2   ... to 2 lines, pwb each, one pfence
//   fence-floor-4   ... 4 lines
//   fence-floor-8   ... 8 lines
//
// A combining pass of a PFC structure that persists with one pfence cannot cost less than
// fence-floor-k, k the lines it writes back; at 1 thread (a pass per operation) fence-floor
// is the one-fence limit of Mops/s. Listed first in a run, it is the baseline, so every
// other structure's `vs` column is its fraction of that limit:
//
//   ferrite bench -s fence-floor,fence-floor-2,fence-floor-8,stack-pfc -w push-pop -t 1
//
// They are measured as any structure is (fresh subject per repetition, median over
// repetitions, pwb/op and pfence/op counted: k and 1 exactly). Every operation of the
// sequence vocabulary does the same pass (value = the operation's argument), so any sequence
// workload runs. Each thread writes its own ring of lines (64 lines, 4 KiB: cached, as a
// combiner's hot lines are) in a scratch pool file, so the flushes hit the same kind of
// mapping as the structures': at more than one thread they measure independent threads
// fencing side by side, not a serial combiner.
#pragma once

#include <vector>

#include "bench/subject.hpp"

namespace ferrite::bench {

void register_fence_floor_subjects(std::vector<subject_kind>& out);

}  // namespace ferrite::bench
