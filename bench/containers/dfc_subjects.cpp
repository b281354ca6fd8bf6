// bench/containers/dfc_subjects.cpp: ferrite's DFC structures as `ferrite bench` subjects.
//
//   dfc-stack   ferrite::dfc_stack  (push_back = push, pop_back = pop; elimination)
//   dfc-queue   ferrite::dfc_queue  (push_back = enqueue, pop_front = dequeue)
//   dfc-deque   ferrite::dfc_deque  (both ends; elimination per side)
//   dpfc-stack  ferrite::dpfc_stack (detectable PFC: the same contract, paid in the pass;
//               1 Mi elements of capacity; ablations no-futex, no-elimination, two-fence)
//   dpfc-queue  ferrite::dpfc_queue (the same on a ring: push_back = enqueue, pop_front = dequeue)
// Each builds a pool (in the configured pool directory, removed when destroyed) whose root
// is the structure's region: one thread record per bench worker, 1 Mi nodes (a push into a
// full pool fails and still counts as an operation). Ablations: no-futex = pure spin;
// no-elimination switches elimination off (stack, deque); no-tid-claims leaves thread ids
// unclaimed (dfc_options::tid_claims: the claim check's cost, e.g.
// `--structure dfc-queue,dfc-queue:no-tid-claims`).
//
// Persistence figures, from the engine's record (combining/stats.hpp): its total is the
// papers' "DFC-TOTAL" (announcements included), its combiner part their "DFC".
#include <unistd.h>

#include <atomic>
#include <filesystem>

#include "bench/containers/dfc_subjects.hpp"
#include "ferrite/containers/dfc_deque.hpp"
#include "ferrite/containers/dfc_queue.hpp"
#include "ferrite/containers/dfc_stack.hpp"
#include "ferrite/containers/dpfc_stack.hpp"
#include "ferrite/pmem/pool.hpp"

namespace ferrite::bench {
namespace {

using element = std::uint64_t;
constexpr std::uint64_t node_capacity = 1 << 20;

std::atomic<unsigned> g_dfc_pool_counter{0};

class dfc_scratch_pool {
public:
    dfc_scratch_pool(const std::filesystem::path& dir, std::size_t region_bytes)
        : path_((dir.empty() ? std::filesystem::path("/dev/shm") : dir) /
                ("ferrite-bench-dfc-" + std::to_string(::getpid()) + "-" + std::to_string(g_dfc_pool_counter++))),
          pool_(pmem::pool::create(path_, "ferrite-bench-dfc", region_bytes + (1 << 20))),
          region_(pool_.root_bytes(region_bytes)), bytes_(region_bytes) {}
    ~dfc_scratch_pool() {
        pool_.close();
        std::error_code ec;
        std::filesystem::remove(path_, ec);
    }
    void* region() const { return region_; }
    std::size_t bytes() const { return bytes_; }

private:
    std::filesystem::path path_;
    pmem::pool pool_;
    void* region_;
    std::size_t bytes_;
};

template <class C>
class dfc_subject final : public subject {
public:
    explicit dfc_subject(const subject_config& cfg)
        : scratch_(cfg.pool_dir, C::required_bytes(std::max(cfg.threads, 1u), node_capacity)),
          c_(C::create(scratch_.region(), scratch_.bytes(), std::max(cfg.threads, 1u), options(cfg.options))) {
        for (std::uint64_t i = 0; i < cfg.initial_size; ++i) run(0, op::push_back, i, 0);
        c_.release(0);  // the prefill ran on this thread; worker 0 takes thread id 0 next
    }
    void run(unsigned tid, op o, std::uint64_t a, std::uint64_t) override {
        if constexpr (requires { c_.push(tid, a); }) {  // stack
            if (o == op::push_back) (void)c_.push(tid, a);
            else (void)c_.pop(tid);
        } else if constexpr (requires { c_.enqueue(tid, a); }) {  // queue
            if (o == op::push_back) (void)c_.enqueue(tid, a);
            else (void)c_.dequeue(tid);
        } else {  // deque
            switch (o) {
                case op::push_back: (void)c_.push_back(tid, a); break;
                case op::push_front: (void)c_.push_front(tid, a); break;
                case op::pop_front: (void)c_.pop_front(tid); break;
                default: (void)c_.pop_back(tid); break;
            }
        }
    }
    std::optional<combining::combining_stats> combining_stats() const override { return c_.stats(); }
    bool reports_combiner_persistence() const override { return true; }

private:
    static combining::dfc_options options(const subject_options& s) {
        combining::dfc_options o;
        o.elimination = s.elimination;
        o.tid_claims = s.tid_claims;
        return o;
    }

    dfc_scratch_pool scratch_;
    C c_;
};

template <class C>
std::unique_ptr<subject> make(const subject_config& cfg) {
    if (cfg.options.futex_wait) return std::make_unique<dfc_subject<C>>(cfg);
    return std::make_unique<dfc_subject<typename C::template rebind_wait<sync::pure_spin>>>(cfg);
}

// ferrite::dpfc_stack: thread ids are the bench workers' (the prefill runs as id 0 before
// the workers start; nothing is claimed).
template <template <class, class, class> class Structure, class Selector>
class dpfc_subject final : public subject {
    using C = Structure<element, Selector, combining::dfc_no_trace>;

public:
    explicit dpfc_subject(const subject_config& cfg)
        : scratch_(cfg.pool_dir, C::required_bytes(std::max(cfg.threads, 1u), node_capacity)),
          c_(C::create(scratch_.region(), scratch_.bytes(), std::max(cfg.threads, 1u), node_capacity,
                       {.elimination = cfg.options.elimination, .one_fence = cfg.options.one_fence})) {
        for (std::uint64_t i = 0; i < cfg.initial_size; ++i) run(0, op::push_back, i, 0);
    }
    void run(unsigned tid, op o, std::uint64_t a, std::uint64_t) override {
        if constexpr (requires { c_.push(tid, a); }) {
            if (o == op::push_back) (void)c_.push(tid, a);
            else (void)c_.pop(tid);
        } else {
            if (o == op::push_back) (void)c_.enqueue(tid, a);
            else (void)c_.dequeue(tid);
        }
    }
    std::optional<combining::combining_stats> combining_stats() const override { return c_.stats(); }

private:
    dfc_scratch_pool scratch_;
    C c_;
};

template <template <class, class, class> class Structure>
std::unique_ptr<subject> make_dpfc(const subject_config& cfg) {
    if (cfg.options.futex_wait) return std::make_unique<dpfc_subject<Structure, containers::use_pfc>>(cfg);
    return std::make_unique<dpfc_subject<Structure, containers::use_pfc_spin>>(cfg);
}

}  // namespace

void register_dfc_subjects(std::vector<subject_kind>& out) {
    out.push_back({"dfc-stack", "ferrite::dfc_stack: detectable flat combining, elimination (DFC, 003)",
                   {op::push_back, op::pop_back}, make<dfc_stack<element>>});
    out.push_back({"dfc-queue", "ferrite::dfc_queue: detectable flat combining (DFC, 004)",
                   {op::push_back, op::pop_front}, make<dfc_queue<element>>});
    out.push_back({"dfc-deque", "ferrite::dfc_deque: detectable flat combining, elimination per side (DFC, 004)",
                   {op::push_back, op::pop_back, op::push_front, op::pop_front}, make<dfc_deque<element>>});
    out.push_back({"dpfc-stack", "ferrite::dpfc_stack: detectable PFC, results in the pass's one fence, elimination",
                   {op::push_back, op::pop_back}, make_dpfc<dpfc_stack>});
    out.push_back({"dpfc-queue", "ferrite::dpfc_queue: detectable PFC on a ring, results in the pass's one fence",
                   {op::push_back, op::pop_front}, make_dpfc<dpfc_queue>});
}

}  // namespace ferrite::bench
