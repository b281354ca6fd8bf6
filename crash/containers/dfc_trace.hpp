// crash/containers/dfc_trace.hpp: the recording trace of the DFC crash targets
// (dfc_targets.cpp).
//
// The engine calls its Trace policy (combining::dfc, dfc_phase.hpp) once per response, in
// linearization order, with the epoch of the phase that gave it, before the phase commits.
// recording_trace appends each one to a preallocated log (one entry per operation of the
// run, so it never allocates inside a phase), which the checkers read: consecutive entries
// with one epoch are one phase, and a prefix of the phases is what the crash left committed.
// Volatile: the log lives in the test process, outside the simulated pool.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "ferrite/combining/dfc.hpp"

namespace ferrite::crash::dfc_check {

struct trace_entry {
    std::uint64_t epoch;
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
    void respond(const combining::dfc_op& op, const combining::dfc_response& r, std::uint64_t epoch) noexcept {
        if (!log) return;
        const auto n = log->count.load(std::memory_order_relaxed);
        if (n == log->capacity) return;  // cannot happen: one entry per operation
        log->entries[n] = {epoch, op.tid, op.seq, op.name, op.param, r};
        log->count.store(n + 1, std::memory_order_release);
    }
    void phase_done(std::uint64_t) noexcept {}
};

}  // namespace ferrite::crash::dfc_check
