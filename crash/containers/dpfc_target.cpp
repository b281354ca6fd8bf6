// crash/containers/dpfc_target.cpp: crash targets dpfc-stack and dpfc-queue
// (ferrite::dpfc_stack and dpfc_queue, detectable structures on the PFC engine), checked for durable linearizability AND detectability
// with the DFC targets' checkers (dfc_history.hpp, dfc_recovered_checks.hpp) and trace
// (dfc_trace.hpp): the contract is the same, recover(tid) -> {seq, took_effect, name, param,
// response}.
//
// Pool: the root holds the structure's region (a fixed capacity, no heap): the stack's holds
// every push of the run and one per thread after recovery; the queue's half the run's
// operations, so that its ring wraps. Workload: 4 threads x
// 30 operations by default, thread tid's operation i a seeded function of (seed, tid, i),
// slightly more pushes (value tid << 32 | i) than pops. Recovery: open the region (which
// validates and recovers; the simulator crashes it too). Checker: open again (idempotence),
// detectability per thread, durable linearizability against the trace's committed passes,
// then every thread pushes once more and a reopened stack must hold those pushes and report
// them as each thread's latest operation, taken, with the next seq.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dfc_history.hpp"
#include "dfc_recovered_checks.hpp"
#include "dfc_target_kinds.hpp"
#include "dfc_workload.hpp"
#include "dfc_trace.hpp"
#include "ferrite/containers/dpfc_stack.hpp"
#include "ferrite/sim/rng.hpp"
#include "targets.hpp"

namespace ferrite::crash {
namespace {

using namespace dfc_check;

// The DFC targets' kinds over the detectable PFC containers, with a fixed capacity.
struct dpfc_stack_kind : basic_stack_kind<dpfc_stack<std::uint64_t, containers::use_pfc, recording_trace>> {
    // Every push of the run and one per thread after recovery: never `full`.
    static std::uint64_t capacity(const sim::run_config& c) { return c.threads * (c.ops_per_thread + 1); }
};
struct dpfc_queue_kind : basic_queue_kind<dpfc_queue<std::uint64_t, containers::use_pfc, recording_trace>> {
    // About half the run's operations, so the ring wraps (about 56% of them enqueue) while
    // the queue (about 12% of them deep) never fills, after recovery neither.
    static std::uint64_t capacity(const sim::run_config& c) { return c.threads * (c.ops_per_thread / 2 + 1); }
};

template <class kind>
class dpfc_workload final : public detectable_run<kind> {
    using base = detectable_run<kind>;
    using container = typename kind::type;
    using base::config_;

public:
    dpfc_workload(pmem::pool& p, const sim::run_config& c)
        : base(c), s_(container::create(region(p, c), bytes(c), c.threads, capacity(c), {}, recording_trace{&this->trace_})) {}

    static std::uint64_t capacity(const sim::run_config& c) { return kind::capacity(c); }
    static std::size_t bytes(const sim::run_config& c) { return container::required_bytes(c.threads, capacity(c)); }
    static void* region(pmem::pool& p, const sim::run_config& c) { return p.root_bytes(bytes(c)); }

    void run_thread(unsigned tid) override { this->run_ops(s_, tid); }

    void recover(pmem::pool& image) const override { (void)container::open(region(image, config_), bytes(config_)); }

    std::string verify(pmem::pool& image, const sim::progress_snapshot& at_crash) const override {
        auto s = container::open(region(image, config_), bytes(config_));
        model recovered;
        std::vector<combining::dfc_recovered_op> rec;
        if (auto problem = this->check_history(s, at_crash, recovered, rec); !problem.empty()) return problem;
        return this->check_after_recovery(
            s, [&] { return container::open(region(image, config_), bytes(config_)); }, rec, recovered);
    }

private:
    container s_;
};

template <class kind>
class dpfc_target final : public sim::target {
public:
    dpfc_target(std::string name, std::string summary) : name_(std::move(name)), summary_(std::move(summary)) {}
    std::string_view name() const override { return name_; }
    std::string_view summary() const override { return summary_; }
    std::uint64_t pool_size(const sim::run_config& c) const override {
        const auto need = 4096 + dpfc_workload<kind>::bytes(c) + 4096;
        return std::max<std::uint64_t>(64 * 1024, (need + 4095) / 4096 * 4096);
    }
    unsigned default_threads() const override { return 4; }  // 4: passes keep more than 4 values (the two-fence path) within a few hundred points
    std::vector<std::string> mutation_scope() const override { return {"include/ferrite/containers/dpfc_"}; }
    std::uint64_t default_ops_per_thread() const override { return 30; }
    std::unique_ptr<sim::workload> prepare(pmem::pool& fresh, const sim::run_config& c) const override {
        return std::make_unique<dpfc_workload<kind>>(fresh, c);
    }

private:
    std::string name_, summary_;
};

}  // namespace

void register_dpfc_targets(sim::target_registry& r) {
    r.add(std::make_unique<dpfc_target<dpfc_stack_kind>>(
        "dpfc-stack", "ferrite::dpfc_stack (detectable PFC: results in the pass's one fence): push/pop"));
    r.add(std::make_unique<dpfc_target<dpfc_queue_kind>>(
        "dpfc-queue", "ferrite::dpfc_queue (detectable PFC, a ring of fixed capacity): enqueue/dequeue"));
}

}  // namespace ferrite::crash
