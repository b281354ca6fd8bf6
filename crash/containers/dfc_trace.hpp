// crash/containers/dfc_trace.hpp: the recording trace of the DFC crash targets
// (dfc_targets.cpp).
//
// The engine calls its Trace policy (combining::dfc, dfc_phase.hpp; the hooks every combining
// engine shares, combining/stats.hpp: combining_trace) once per response, in linearization
// order, before the phase commits (applied), and once after each committed phase
// (pass_done). recording_trace appends each response to a preallocated log (one entry per
// operation of the run, so it never allocates inside a phase), stamped with the number of
// phases it saw finish before it, which the checkers read: consecutive entries with one
// phase number are one phase, and a prefix of the phases is what the crash left committed.
// Volatile: the log lives in the test process, outside the simulated pool.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "ferrite/combining/dfc.hpp"
#include "ferrite/combining/stats.hpp"

namespace ferrite::crash::dfc_check {

struct trace_entry {
    std::uint64_t phase;  // phases finished before this response (pass_done calls)
    unsigned tid;
    std::uint64_t seq, name, param;
    combining::dfc_response response;
};

struct trace_log {
    explicit trace_log(std::size_t n) : entries(std::make_unique<trace_entry[]>(n)), capacity(n) {}
    std::unique_ptr<trace_entry[]> entries;
    std::size_t capacity;
    std::atomic<std::size_t> count{0};
};

struct recording_trace {
    trace_log* log = nullptr;
    std::uint64_t phase = 0;  // the combiner's only: this trace is the engine's, called under its lock
    void applied(const combining::dfc_op& op, const combining::dfc_response& r) noexcept {
        if (!log) return;
        const auto n = log->count.load(std::memory_order_relaxed);
        if (n == log->capacity) return;  // cannot happen: one entry per operation
        log->entries[n] = {phase, op.tid, op.seq, op.name, op.param, r};
        log->count.store(n + 1, std::memory_order_release);
    }
    void pass_done() noexcept { ++phase; }
};
static_assert(combining::combining_trace<recording_trace, combining::dfc_op, combining::dfc_response>,
              "the DFC targets' trace implements the engines' trace hooks (combining/stats.hpp)");

}  // namespace ferrite::crash::dfc_check
