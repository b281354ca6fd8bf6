// crash/containers/dpfc_target.cpp: crash targets dpfc-stack and dpfc-queue
// (ferrite::dpfc_stack and dpfc_queue, detectable structures on the PFC engine), checked for durable linearizability AND detectability
// with the DFC targets' checkers (dfc_history.hpp, dfc_recovered_checks.hpp) and trace
// (dfc_trace.hpp): the contract is the same, recover(tid) -> {seq, took_effect, name, param,
// response}.
//
// Pool: the root holds the structure's region (a fixed capacity, no heap): the stack's holds
// every push of the run and one per thread after recovery; the queue's half the run's
// operations, so that its ring wraps. Workload: 3 threads x
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
#include "dfc_trace.hpp"
#include "ferrite/containers/dpfc_stack.hpp"
#include "ferrite/sim/rng.hpp"
#include "targets.hpp"

namespace ferrite::crash {
namespace {

using namespace dfc_check;

struct dpfc_stack_kind {
    using type = dpfc_stack<std::uint64_t, containers::use_pfc, recording_trace>;
    static constexpr std::uint64_t names = 2;
    static dfc_response run(type& s, unsigned tid, std::uint64_t name, std::uint64_t v) {
        return name == type::push_op ? ack_or_full(s.push(tid, v)) : value_or_empty(s.pop(tid));
    }
    static dfc_response apply(model& m, std::uint64_t name, std::uint64_t v) {
        return name == type::push_op ? model_push_back(m, v) : model_pop_back(m);
    }
    static model contents(const type& s) {
        auto c = s.unsynchronized_contents();  // top first
        return model(c.rbegin(), c.rend());
    }
    // Every push of the run and one per thread after recovery: never `full`.
    static std::uint64_t capacity(const sim::run_config& c) { return c.threads * (c.ops_per_thread + 1); }
};
struct dpfc_queue_kind {
    using type = dpfc_queue<std::uint64_t, containers::use_pfc, recording_trace>;
    static constexpr std::uint64_t names = 2;
    static dfc_response run(type& s, unsigned tid, std::uint64_t name, std::uint64_t v) {
        return name == type::enqueue_op ? ack_or_full(s.enqueue(tid, v)) : value_or_empty(s.dequeue(tid));
    }
    static dfc_response apply(model& m, std::uint64_t name, std::uint64_t v) {
        return name == type::enqueue_op ? model_push_back(m, v) : model_pop_front(m);
    }
    static model contents(const type& s) {
        auto c = s.unsynchronized_contents();  // front first
        return model(c.begin(), c.end());
    }
    // About half the run's operations, so the ring wraps (about 56% of them enqueue) while
    // the queue (about 12% of them deep) never fills, after recovery neither.
    static std::uint64_t capacity(const sim::run_config& c) { return c.threads * (c.ops_per_thread / 2 + 1); }
};

template <class kind>
class dpfc_workload final : public sim::workload {
    using container = typename kind::type;

public:
    dpfc_workload(pmem::pool& p, const sim::run_config& c)
        : config_(c), progress_(c.threads), trace_(c.threads * c.ops_per_thread),
          observed_(c.threads, std::vector<dfc_response>(c.ops_per_thread)),
          s_(container::create(region(p, c), bytes(c), c.threads, capacity(c), {}, recording_trace{&trace_})) {}

    static std::uint64_t capacity(const sim::run_config& c) { return kind::capacity(c); }
    static std::size_t bytes(const sim::run_config& c) { return container::required_bytes(c.threads, capacity(c)); }
    static void* region(pmem::pool& p, const sim::run_config& c) { return p.root_bytes(bytes(c)); }

    std::pair<std::uint64_t, std::uint64_t> op_of(unsigned tid, std::uint64_t i) const {
        const auto r = sim::mix(config_.seed, (std::uint64_t{tid} << 40) ^ i);
        std::uint64_t name = 1 + (r % kind::names);
        if (!is_push(name) && (r >> 20) % 8 == 0) name -= 1;
        return {name, std::uint64_t{tid} << 32 | i};
    }

    void run_thread(unsigned tid) override {
        for (std::uint64_t i = 0; i < config_.ops_per_thread; ++i) {
            const auto [name, v] = op_of(tid, i);
            progress_.begin(tid);
            observed_[tid][i] = kind::run(s_, tid, name, v);
            progress_.end(tid);
        }
    }

    const sim::op_progress& progress() const noexcept override { return progress_; }

    void recover(pmem::pool& image) const override { (void)container::open(region(image, config_), bytes(config_)); }

    std::string verify(pmem::pool& image, const sim::progress_snapshot& at_crash) const override {
        auto s = container::open(region(image, config_), bytes(config_));
        const model recovered = kind::contents(s);
        std::vector<combining::dfc_recovered_op> rec(config_.threads);
        for (unsigned t = 0; t < config_.threads; ++t) rec[t] = s.recover(t);
        const auto op = [&](unsigned t, std::uint64_t i) { return op_of(t, i); };
        if (auto problem = check_detectability(rec, at_crash, observed_, op); !problem.empty()) return problem;
        if (auto problem = check_linearizable<kind>(trace_, rec, recovered, at_crash, observed_); !problem.empty())
            return problem;
        return check_after_recovery(s, image, rec, recovered);
    }

private:
    std::string check_after_recovery(container& s, pmem::pool& image, const std::vector<combining::dfc_recovered_op>& rec,
                                     model m) const {
        constexpr std::uint64_t push = containers::dpfc_push_op;
        for (unsigned t = 0; t < config_.threads; ++t) {
            const std::uint64_t v = std::uint64_t{0xaf} << 56 | t;
            if (!(kind::run(s, t, push, v) == kind::apply(m, push, v)))
                return "after recovery: thread " + std::to_string(t) + "'s push got another response than the model's";
        }
        auto again = container::open(region(image, config_), bytes(config_));
        if (kind::contents(again) != m) return "after recovery: pushes made after recovery are not all in the structure";
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
    unsigned default_threads() const override { return 3; }
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
