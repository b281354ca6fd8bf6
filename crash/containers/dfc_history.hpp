// crash/containers/dfc_history.hpp: durable linearizability of a recovered DFC structure,
// checked against the recorded trace (dfc_trace.hpp) and a sequential model (dfc_target_kinds.hpp).
//
// The trace's phases are its runs of entries with one phase number. A prefix of them committed: at
// least up to the last phase holding an operation that returned before the crash, at most
// up to the first holding one that recovery reports as not (yet) run. In random mode the
// workers resume before the check, so the trace may run past the crash: every cut in that
// range is tried (at most 64, from the longest), and the structure passes if one explains
// the recovered state. For a cut:
//   * the committed phases replay on the model with the recorded responses (a `full` push
//     has no effect); no operation appears twice; each is reported by its thread's recovery
//     (seq <= the recovered seq; the same outcome if it is the thread's latest); each that
//     returned did so with the committed response;
//   * every operation that returned is in them; the only other operations that took effect
//     are those recovery executed (each thread's latest, took_effect, outside the cut), and
//     some order of them, applied after the cut, gives exactly their recovered responses
//     and the recovered contents.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dfc_target_kinds.hpp"
#include "dfc_recovered_checks.hpp"
#include "dfc_trace.hpp"
#include "ferrite/sim/progress.hpp"

namespace ferrite::crash::dfc_check {

// The first `upto` entries of `trace` are the committed phases.
template <class Kind>
std::string check_history(const trace_log& trace, std::size_t upto, const std::vector<combining::dfc_recovered_op>& rec,
                          const model& recovered, const sim::progress_snapshot& at_crash, const responses& observed) {
    const auto threads = static_cast<unsigned>(rec.size());
    model m;
    std::set<std::pair<unsigned, std::uint64_t>> seen;
    for (std::size_t i = 0; i < upto; ++i) {
        const auto& e = trace.entries[i];
        const auto& r = rec[e.tid];
        if (!seen.insert({e.tid, e.seq}).second) return op_text(e.tid, e.seq) + " applied twice";
        if (e.seq > r.seq) return op_text(e.tid, e.seq) + " is in a committed phase but recovery reports seq " + std::to_string(r.seq);
        if (e.seq == r.seq && !(r.took_effect && r.response == e.response))
            return op_text(e.tid, e.seq) + " is in a committed phase but recovery reports another outcome";
        if (e.seq <= at_crash[e.tid].completed && !(observed[e.tid][e.seq - 1] == e.response))
            return op_text(e.tid, e.seq) + " returned a response other than the committed one";
        if (e.response.status == dfc_status::full) continue;  // a push without effect
        if (!(Kind::apply(m, e.name, e.param) == e.response))
            return "the committed history is not sequential: entry " + std::to_string(i) + " (" + op_text(e.tid, e.seq) + ")";
    }
    std::vector<unsigned> rest;
    for (unsigned t = 0; t < threads; ++t) {
        const auto last_in = rec[t].took_effect ? rec[t].seq : rec[t].seq - (rec[t].seq > 0);
        for (std::uint64_t q = 1; q <= last_in; ++q) {
            if (seen.count({t, q})) continue;
            if (q <= at_crash[t].completed) return op_text(t, q) + " returned but is not in the recovered history";
            if (q != rec[t].seq) return op_text(t, q) + " is missing";
            rest.push_back(t);
        }
    }
    // The operations executed by recovery: some order must explain their responses.
    std::sort(rest.begin(), rest.end());
    do {
        model x = m;
        bool ok = true;
        for (unsigned t : rest)
            if (rec[t].response.status != dfc_status::full && !(Kind::apply(x, rec[t].name, rec[t].param) == rec[t].response)) { ok = false; break; }
        if (ok && x == recovered) return {};
    } while (std::next_permutation(rest.begin(), rest.end()));
    return "recovered " + std::to_string(recovered.size()) + " elements, which no linearization of the " +
           std::to_string(upto) + " committed and " + std::to_string(rest.size()) + " recovered operations gives";
}

// Empty if some committed prefix of the trace's phases explains the recovered state (see
// the header), else the problem of the longest cut tried.
template <class Kind>
std::string check_linearizable(const trace_log& trace, const std::vector<combining::dfc_recovered_op>& rec,
                               const model& recovered, const sim::progress_snapshot& at_crash, const responses& observed) {
    // Phases of the trace (consecutive entries with one phase number). In random mode the
    // workers resume before verify() runs, so the trace may hold phases after the crash:
    // the committed prefix is some cut between the last phase holding a returned
    // operation and the first holding an operation recovery reports as not (yet) run.
    const auto n = trace.count.load(std::memory_order_acquire);
    std::vector<std::size_t> phase_end;  // phase p = entries [phase_end[p-1], phase_end[p])
    for (std::size_t i = 0; i < n; ++i)
        if (i + 1 == n || trace.entries[i + 1].phase != trace.entries[i].phase) phase_end.push_back(i + 1);
    std::size_t lo = 0, hi = phase_end.size();  // candidate cuts: number of committed phases
    for (std::size_t p = 0, i = 0; p < phase_end.size(); ++p)
        for (; i < phase_end[p]; ++i) {
            const auto& e = trace.entries[i];
            if (e.seq <= at_crash[e.tid].completed) lo = p + 1;
            const auto& r = rec[e.tid];
            if ((e.seq > r.seq || (e.seq == r.seq && !r.took_effect)) && hi > p) hi = p;
        }
    if (lo > hi)
        return "an operation that returned was applied after one that recovery lost (phases " +
               std::to_string(lo) + " > " + std::to_string(hi) + ")";
    std::string first_problem;
    for (std::size_t cut = hi + 1; cut-- > lo && hi - cut < 64;) {
        auto problem = check_history<Kind>(trace, cut == 0 ? 0 : phase_end[cut - 1], rec, recovered, at_crash, observed);
        if (problem.empty()) return {};
        if (first_problem.empty()) first_problem = std::move(problem);
    }
    return first_problem;
}

}  // namespace ferrite::crash::dfc_check
