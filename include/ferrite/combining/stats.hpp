// ferrite/combining/stats.hpp: the one vocabulary every combining engine (pfc, fpfc, dfc)
// reports in: the statistics record (combining_stats, read through each engine's stats()),
// the recorder the engines fill it with, and the trace concept (combining_trace) that the
// structures' and the engine's Trace policies satisfy (no_trace: the default, does nothing).
//
// Statistics. A combining *pass* (DFC: a phase) is one run of the combiner over the pending
// operations; the record counts the passes that applied at least one operation, the
// operations they applied, and the persistence instructions (pmem/counters.hpp: pwb lines,
// pfences, psyncs, NT stores, what the algorithm asked for, whatever the backend) split in
// two: `combiner`, issued inside the passes (by the combiner, for every operation of its
// batch), and `total`, the combiner's plus whatever a caller issued itself outside a pass
// during its operation. In ferrite's three engines nothing persists outside a pass (PFC and
// FPFC publish in DRAM; DFC's combiner writes the announcements back), so total equals
// combiner; the engines measure the difference anyway (two reads of the thread's counters
// per operation, a shared write only when it is nonzero), so that an engine that starts
// persisting outside its passes shows it instead of hiding it. Passes run by recovery count
// like any other (their persistence is the combiner's and the total's alike).
//
// Traces (tests and crash targets): the combiner calls applied(op, response) for every
// operation in linearization order, before its effect can reach the media (so a crash
// image never holds an effect the trace lacks), and pass_done() at the end of each pass,
// once everything applied so far is durable. Called by the combiner only. The PFC
// containers' cores call it with their request and response types, the DFC engine with
// dfc_op and dfc_response.
//
// Crash consistency: nothing here is persistent; the record and the traces are volatile.
#pragma once

#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>

#include "ferrite/pmem/counters.hpp"

namespace ferrite::combining {

// Persistence instructions per operation or per pass (a counters' fields divided).
struct persistence_rate {
    double pwb_lines = 0;
    double pfences = 0;
    double psyncs = 0;
    double nt_stores = 0;
};

// What a combining engine did since it was made (a snapshot: take two and subtract them to
// measure a region).
struct combining_stats {
    std::uint64_t passes = 0;      // passes (DFC: phases) that applied at least one operation
    std::uint64_t operations = 0;  // operations those passes applied
    pmem::counters combiner{};     // persistence instructions issued inside the passes
    pmem::counters total{};        // combiner's + callers' own outside a pass (see the header)

    // Operations per pass, 0 before the first pass.
    double mean_batch_size() const noexcept { return ratio(operations, passes); }
    persistence_rate per_op(const pmem::counters& c) const noexcept { return divided(c, operations); }
    persistence_rate per_pass(const pmem::counters& c) const noexcept { return divided(c, passes); }

    friend combining_stats operator-(combining_stats a, const combining_stats& b) noexcept {
        a.passes -= b.passes;
        a.operations -= b.operations;
        a.combiner = a.combiner - b.combiner;
        a.total = a.total - b.total;
        return a;
    }
    friend bool operator==(const combining_stats&, const combining_stats&) = default;

private:
    static double ratio(std::uint64_t n, std::uint64_t d) noexcept {
        return d ? static_cast<double>(n) / static_cast<double>(d) : 0;
    }
    static persistence_rate divided(const pmem::counters& c, std::uint64_t d) noexcept {
        return {ratio(c.pwb_lines, d), ratio(c.pfences, d), ratio(c.psyncs, d), ratio(c.nt_stores, d)};
    }
};

// The engines' accumulator behind stats(). on_pass: the combiner only (it holds the lock),
// so relaxed loads and stores suffice; on_outside: any thread (an atomic add, taken only
// when a caller persisted something outside a pass, which ferrite's engines never do).
class stats_recorder {
public:
    void on_pass(std::size_t ops, const pmem::counters& c) noexcept {
        if (ops == 0) return;
        bump(passes_, 1);
        bump(operations_, ops);
        bump(combiner_[0], c.pwb_lines);
        bump(combiner_[1], c.pfences);
        bump(combiner_[2], c.psyncs);
        bump(combiner_[3], c.nt_stores);
    }
    void on_outside(const pmem::counters& c) noexcept {
        outside_[0].fetch_add(c.pwb_lines, std::memory_order_relaxed);
        outside_[1].fetch_add(c.pfences, std::memory_order_relaxed);
        outside_[2].fetch_add(c.psyncs, std::memory_order_relaxed);
        outside_[3].fetch_add(c.nt_stores, std::memory_order_relaxed);
    }
    // What the calling thread issued during its operation outside the pass it ran (if any):
    // `during` is its counters' difference over the whole operation, `in_pass` over its pass.
    void after_operation(const pmem::counters& during, const pmem::counters& in_pass) noexcept {
        const auto own = during - in_pass;
        if (own != pmem::counters{}) [[unlikely]]
            on_outside(own);
    }
    combining_stats snapshot() const noexcept {
        combining_stats s;
        s.passes = passes_.load(std::memory_order_relaxed);
        s.operations = operations_.load(std::memory_order_relaxed);
        s.combiner = read(combiner_);
        s.total = s.combiner;
        s.total += read(outside_);
        return s;
    }

private:
    using four = std::atomic<std::uint64_t>[4];
    static void bump(std::atomic<std::uint64_t>& a, std::uint64_t n) noexcept {
        a.store(a.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
    static pmem::counters read(const four& a) noexcept {
        return {a[0].load(std::memory_order_relaxed), a[1].load(std::memory_order_relaxed),
                a[2].load(std::memory_order_relaxed), a[3].load(std::memory_order_relaxed)};
    }
    std::atomic<std::uint64_t> passes_{0}, operations_{0};
    four combiner_{};
    four outside_{};
};

// The trace hooks (see the header), for operations described by Op with responses Response.
template <class T, class Op, class Response>
concept combining_trace = requires(T& t, const Op& op, const Response& r) {
    { t.applied(op, r) } noexcept;
    { t.pass_done() } noexcept;
};

// The default trace: records nothing.
struct no_trace {
    template <class Op, class Response>
    void applied(const Op&, const Response&) noexcept {}
    void pass_done() noexcept {}
};

}  // namespace ferrite::combining
