// crash/containers/dfc_targets.cpp: crash targets dfc-stack, dfc-queue and dfc-deque, and
// their registration.
//
// Each target runs 3 threads by default, 30 operations each, on a structure whose node pool
// grows into a buddy heap in the pool, and kills only its own persistence sites under flush
// mutation testing (the heap's are the alloc target's). The parts, one job each:
//   dfc_target_kinds.hpp      the three structures, their operations and sequential model
//   dfc_trace.hpp             the recording trace: every response in linearization order
//   dfc_workload.hpp          pool layout, seeded workload, recovery, the checker's order
//   dfc_recovered_checks.hpp  detectability per thread, and the heap (no leak)
//   dfc_history.hpp           durable linearizability against the trace's committed phases
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dfc_target_kinds.hpp"
#include "dfc_workload.hpp"
#include "targets.hpp"

namespace ferrite::crash {
namespace {

using dfc_check::deque_kind;
using dfc_check::dfc_workload;
using dfc_check::queue_kind;
using dfc_check::stack_kind;

template <class Kind>
class dfc_target final : public sim::target {
public:
    dfc_target(std::string name, std::string summary) : name_(std::move(name)), summary_(std::move(summary)) {}
    std::string_view name() const override { return name_; }
    std::string_view summary() const override { return summary_; }
    std::uint64_t pool_size(const sim::run_config& c) const override {
        const auto need = 4096 + dfc_workload<Kind>::root_bytes(c) + 4096;
        return std::max<std::uint64_t>(64 * 1024, (need + 4095) / 4096 * 4096);
    }
    unsigned default_threads() const override { return 3; }
    // Its own code: the heap's sites are the alloc target's to kill.
    std::vector<std::string> mutation_scope() const override {
        return {"include/ferrite/combining/dfc", "include/ferrite/containers/dfc_"};
    }
    std::uint64_t default_ops_per_thread() const override { return 30; }
    std::unique_ptr<sim::workload> prepare(pmem::pool& fresh, const sim::run_config& c) const override {
        return std::make_unique<dfc_workload<Kind>>(fresh, c);
    }

private:
    std::string name_, summary_;
};

}  // namespace

void register_dfc_targets(sim::target_registry& r) {
    r.add(std::make_unique<dfc_target<stack_kind>>(
        "dfc-stack", "ferrite::dfc_stack (detectable flat combining, elimination): push/pop"));
    r.add(std::make_unique<dfc_target<queue_kind>>(
        "dfc-queue", "ferrite::dfc_queue (detectable flat combining): enqueue/dequeue"));
    r.add(std::make_unique<dfc_target<deque_kind>>(
        "dfc-deque", "ferrite::dfc_deque (detectable flat combining, elimination per side): both ends"));
}

}  // namespace ferrite::crash
