// crash/containers/dfc_workload.hpp: the workload of the DFC crash targets (dfc_targets.cpp):
// the pool's layout, each thread's seeded operations, recovery, and the checker that runs
// the checks of dfc_recovered_checks.hpp and dfc_history.hpp, then operations after recovery.
//
// Pool: the root holds the DFC region (4 nodes of its own, rounded up to a page), then a
// buddy heap that the node pool grows into (chunks of 4, 8, 16, ... nodes: every run grows
// it several times, and crashes hit growth too), big enough for every push of a run.
// Workload: thread tid's operation i is a function of (seed, tid, i): a mix of pushes (value
// tid << 32 | i, so thread 0's first value is 0: BOTTOM must differ from it) and pops,
// slightly more pushes; each thread records what every operation returned before
// progress.end().
// Recovery: heap.recover(), open the region with the heap and recover() (restartable: the
// simulator crashes it too), heap.finish_recovery().
// Checker (verify), after recovering once more (idempotence): the structure's invariants
// (Kind::check), the heap (check_heap), detectability, durable linearizability; once those
// pass, the recovered structure keeps working (check_after_recovery).
// The seeded operations, the threads' loop and the checks on a recovered structure are
// detectable_run's, which the detectable PFC targets (dpfc_target.cpp) share.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dfc_history.hpp"
#include "dfc_target_kinds.hpp"
#include "dfc_recovered_checks.hpp"
#include "dfc_trace.hpp"
#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/sim/rng.hpp"
#include "ferrite/sim/target.hpp"

namespace ferrite::crash::dfc_check {

// The region's own nodes and the first grown chunk: small, so that every run grows.
inline constexpr std::uint64_t region_nodes = 4;
inline constexpr std::uint64_t first_growth_nodes = 4;
// A heap with room for chunks holding every push of a run (a full pool would answer `full`,
// which the model accepts as "no effect" but cannot predict exactly: frees wait for their
// phase's commit). Chunks double, so they hold at most 2x the nodes in use; a buddy block
// at most doubles again.
inline std::uint64_t heap_bytes(const sim::run_config& c) {
    const std::uint64_t nodes = std::max<std::uint64_t>(64, c.threads * c.ops_per_thread);
    return (std::bit_ceil(nodes * 4 * sizeof(combining::dfc_node)) + 64 * 1024 + 4095) / 4096 * 4096;
}

// What the workloads of the detectable structures share, wherever their structure lives
// (dfc_workload below: a DFC region and a heap; dpfc_target.cpp: a PFC region of fixed
// capacity): each thread's seeded operations and their recorded responses, and the checks
// on a recovered structure. The derived workload owns the structure and runs run_ops on it.
template <class Kind>
class detectable_run : public sim::workload {
public:
    using container = typename Kind::type;

    // Operation i of thread tid: (name, value), a function of (seed, tid, i).
    std::pair<std::uint64_t, std::uint64_t> op_of(unsigned tid, std::uint64_t i) const {
        return seeded_op(config_.seed, Kind::names, tid, i);
    }
    const sim::op_progress& progress() const noexcept override { return progress_; }

protected:
    explicit detectable_run(const sim::run_config& c)
        : config_(c), progress_(c.threads), trace_(c.threads * c.ops_per_thread),
          observed_(c.threads, std::vector<dfc_response>(c.ops_per_thread)) {}

    void run_ops(container& s, unsigned tid) {
        for (std::uint64_t i = 0; i < config_.ops_per_thread; ++i) {
            const auto [name, v] = op_of(tid, i);
            progress_.begin(tid);
            observed_[tid][i] = Kind::run(s, tid, name, v);
            progress_.end(tid);
        }
    }

    // Detectability and durable linearizability of the recovered `s`; its contents and each
    // thread's recover(t) are left in `recovered` and `rec` for check_after_recovery.
    std::string check_history(container& s, const sim::progress_snapshot& at_crash, model& recovered,
                              std::vector<combining::dfc_recovered_op>& rec) const {
        recovered = Kind::contents(s);
        rec.assign(config_.threads, {});
        for (unsigned t = 0; t < config_.threads; ++t) rec[t] = s.recover(t);
        const auto op = [&](unsigned t, std::uint64_t i) { return op_of(t, i); };
        if (auto problem = check_detectability(rec, at_crash, observed_, op); !problem.empty()) return problem;
        return check_linearizable<Kind>(trace_, rec, recovered, at_crash, observed_);
    }

    // The recovered structure keeps working: every thread pushes one more value (push
    // operations are the odd names of every kind: 1 is one), which must answer as the model
    // says and, after reopen() opens (and recovers) the structure once more, be in it and be
    // each thread's latest operation, with the next seq (recovery left each thread's active
    // slot right).
    template <class Reopen>
    std::string check_after_recovery(container& s, Reopen&& reopen, const std::vector<combining::dfc_recovered_op>& rec,
                                     model m) const {
        constexpr std::uint64_t push = 1;
        for (unsigned t = 0; t < config_.threads; ++t) {
            const std::uint64_t v = std::uint64_t{0xaf} << 56 | t;
            if (!(Kind::run(s, t, push, v) == Kind::apply(m, push, v)))
                return "after recovery: thread " + std::to_string(t) + "'s push got another response than the model's";
        }
        auto again = reopen();
        if (Kind::contents(again) != m) return "after recovery: pushes made after recovery are not all in the structure";
        for (unsigned t = 0; t < config_.threads; ++t) {
            const auto r = again.recover(t);
            if (r.seq != rec[t].seq + 1 || !r.took_effect || r.param != (std::uint64_t{0xaf} << 56 | t))
                return "after recovery: thread " + std::to_string(t) + " recovered seq " + std::to_string(r.seq) +
                       ", not its push after recovery (seq " + std::to_string(rec[t].seq + 1) + ")";
        }
        return {};
    }

    sim::run_config config_;
    sim::op_progress progress_;
    trace_log trace_;
    responses observed_;
};

template <class Kind>
class dfc_workload final : public detectable_run<Kind> {
    using base = detectable_run<Kind>;
    using container = typename Kind::type;
    using base::config_;

public:
    dfc_workload(pmem::pool& p, const sim::run_config& c)
        : base(c), heap_(alloc::buddy_heap::create(p, heap_offset(p, c), heap_bytes(c))),
          s_(container::create(region(p, c), bytes(c), c.threads, options(heap_), recording_trace{&this->trace_})) {}

    // The pool's root: the DFC region (rounded up to a page), then the heap.
    static std::size_t bytes(const sim::run_config& c) { return container::required_bytes(c.threads, region_nodes); }
    static std::size_t region_span(const sim::run_config& c) { return (bytes(c) + 4095) / 4096 * 4096; }
    static std::size_t root_bytes(const sim::run_config& c) { return region_span(c) + heap_bytes(c); }
    static void* region(pmem::pool& p, const sim::run_config& c) { return p.root_bytes(root_bytes(c)); }
    static std::uint64_t heap_offset(pmem::pool& p, const sim::run_config& c) {
        return static_cast<std::uint64_t>(static_cast<std::byte*>(region(p, c)) - p.base()) + region_span(c);
    }
    static combining::dfc_options options(alloc::buddy_heap& heap) {
        combining::dfc_options o;
        o.grow_from = &heap;
        o.first_growth_nodes = first_growth_nodes;
        return o;
    }

    void run_thread(unsigned tid) override { this->run_ops(s_, tid); }

    void recover(pmem::pool& image) const override {
        auto heap = alloc::buddy_heap::open(image, heap_offset(image, config_));
        heap.recover();
        auto s = container::open(region(image, config_), bytes(config_), options(heap));
        s.recover();
        heap.finish_recovery();
    }

    std::string verify(pmem::pool& image, const sim::progress_snapshot& at_crash) const override {
        auto heap = alloc::buddy_heap::open(image, heap_offset(image, config_));
        heap.recover();
        auto s = container::open(region(image, config_), bytes(config_), options(heap));
        s.recover();
        heap.finish_recovery();
        if (auto problem = Kind::check(s); !problem.empty()) return "structure invalid: " + problem;
        if (auto problem = check_heap(heap, region(image, config_), config_.threads); !problem.empty()) return problem;
        model recovered;
        std::vector<combining::dfc_recovered_op> rec;
        if (auto problem = this->check_history(s, at_crash, recovered, rec); !problem.empty()) return problem;
        return this->check_after_recovery(
            s, [&] { return container::open(region(image, config_), bytes(config_), options(heap)); }, rec, recovered);
    }

private:
    alloc::buddy_heap heap_;  // before s_: the structure grows into it
    container s_;
};

}  // namespace ferrite::crash::dfc_check
