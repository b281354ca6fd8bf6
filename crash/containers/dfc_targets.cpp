// crash/containers/dfc_targets.cpp: crash targets dfc-stack, dfc-queue and dfc-deque.
//
// Workload: each thread runs a seeded mix of pushes (values tid << 32 | i, so thread 0's
// first value is 0: BOTTOM must differ from it) and pops (for the deque at both ends, for
// the queue enqueue/dequeue), 3 threads by default, on a structure whose region holds 4
// nodes and whose node pool grows into a buddy heap in the pool (chunks of 4, 8, 16, ...
// nodes: every run grows it several times, and crashes hit growth too). The combiner records, through the
// structure's Trace policy, every response in linearization order with its phase's epoch.
// Each thread records what every operation returned before progress.end().
//
// Recovery: heap.recover(), open the region with the heap and recover() (restartable: the
// simulator crashes it too), heap.finish_recovery().
// Checker (verify), after recovering once more (idempotence), and, once the checks below
// pass, operations after recovery (check_after_recovery):
//   * structure invariants (deque: prev mirrors next); the heap is consistent and its live
//     blocks are exactly the node chunks the structure's chunk table names (no leak);
//   * detectability, per thread t with k operations returned: recover(t) reports seq k (or
//     k + 1 if operation k + 1 was pending); seq k: took effect, with the response the
//     thread saw; seq k + 1: its name/param are the pending operation's;
//   * durable linearizability: a prefix of the trace's phases (the committed ones: at least
//     up to the last returned operation, at most up to the first one recovery did not run;
//     random mode resumes the workers before checking, so the trace may run past the crash)
//     replays on a sequential model with the recorded responses; every operation in
//     them is reported by its thread's recovery (seq <= recovered seq, the same response if
//     it is the thread's latest), none twice; every returned operation is among them with
//     the response its thread saw; the operations executed by recovery (each thread's
//     latest, took_effect, not in the replayed phases) are applied in some order to the
//     replayed state giving exactly their recovered responses and the recovered contents.
#include <algorithm>
#include <bit>
#include <atomic>
#include <deque>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/containers/dfc_deque.hpp"
#include "ferrite/containers/dfc_queue.hpp"
#include "ferrite/containers/dfc_stack.hpp"
#include "ferrite/sim/rng.hpp"
#include "targets.hpp"

namespace ferrite::crash {
namespace {

using combining::dfc_response;
using combining::dfc_status;
// The region's own nodes and the first grown chunk: small, so that every run grows.
inline constexpr std::uint64_t region_nodes = 4;
inline constexpr std::uint64_t first_growth_nodes = 4;
// A heap with room for chunks holding every push of a run (a full pool would answer `full`,
// which the model accepts as "no effect" but cannot predict exactly: frees wait for their
// phase's commit). Chunks double, so they hold at most 2x the nodes in use; a buddy block
// at most doubles again.
std::uint64_t heap_bytes(const sim::run_config& c) {
    const std::uint64_t nodes = std::max<std::uint64_t>(64, c.threads * c.ops_per_thread);
    return (std::bit_ceil(nodes * 4 * sizeof(combining::dfc_node)) + 64 * 1024 + 4095) / 4096 * 4096;
}

struct trace_entry {
    std::uint64_t epoch;
    unsigned tid;
    std::uint64_t seq, name, param;
    dfc_response response;
};

struct trace_log {
    explicit trace_log(std::size_t n) : entries(std::make_unique<trace_entry[]>(n)), capacity(n) {}
    std::unique_ptr<trace_entry[]> entries;
    std::size_t capacity;
    std::atomic<std::size_t> count{0};
};

struct recording_trace {
    trace_log* log = nullptr;
    void respond(const combining::dfc_op& op, const dfc_response& r, std::uint64_t epoch) noexcept {
        if (!log) return;
        const auto n = log->count.load(std::memory_order_relaxed);
        if (n == log->capacity) return;  // cannot happen: one entry per operation
        log->entries[n] = {epoch, op.tid, op.seq, op.name, op.param, r};
        log->count.store(n + 1, std::memory_order_release);
    }
    void phase_done(std::uint64_t) noexcept {}
};

using model = std::deque<std::uint64_t>;
dfc_response model_push_back(model& m, std::uint64_t v) { m.push_back(v); return {dfc_status::ack, 0}; }
dfc_response model_push_front(model& m, std::uint64_t v) { m.push_front(v); return {dfc_status::ack, 0}; }
dfc_response model_pop_back(model& m) {
    if (m.empty()) return {dfc_status::empty, 0};
    const auto v = m.back();
    m.pop_back();
    return {dfc_status::value, v};
}
dfc_response model_pop_front(model& m) {
    if (m.empty()) return {dfc_status::empty, 0};
    const auto v = m.front();
    m.pop_front();
    return {dfc_status::value, v};
}
dfc_response ack_or_full(bool ok) { return {ok ? dfc_status::ack : dfc_status::full, 0}; }
dfc_response value_or_empty(const std::optional<std::uint64_t>& v) {
    return v ? dfc_response{dfc_status::value, *v} : dfc_response{dfc_status::empty, 0};
}

// Structure kinds: the container, how a thread picks operations, the sequential model.
struct stack_kind {
    using type = dfc_stack<std::uint64_t, sync::spin_then_futex<>, recording_trace>;
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
    static std::string check(const type&) { return {}; }
};

struct queue_kind {
    using type = dfc_queue<std::uint64_t, sync::spin_then_futex<>, recording_trace>;
    static constexpr std::uint64_t names = 2;
    static dfc_response run(type& s, unsigned tid, std::uint64_t name, std::uint64_t v) {
        return name == type::enqueue_op ? ack_or_full(s.enqueue(tid, v)) : value_or_empty(s.dequeue(tid));
    }
    static dfc_response apply(model& m, std::uint64_t name, std::uint64_t v) {
        return name == type::enqueue_op ? model_push_back(m, v) : model_pop_front(m);
    }
    static model contents(const type& s) {
        auto c = s.unsynchronized_contents();
        return model(c.begin(), c.end());
    }
    static std::string check(const type&) { return {}; }
};

struct deque_kind {
    using type = dfc_deque<std::uint64_t, sync::spin_then_futex<>, recording_trace>;
    static constexpr std::uint64_t names = 4;
    static dfc_response run(type& s, unsigned tid, std::uint64_t name, std::uint64_t v) {
        switch (name) {
            case type::push_front_op: return ack_or_full(s.push_front(tid, v));
            case type::pop_front_op: return value_or_empty(s.pop_front(tid));
            case type::push_back_op: return ack_or_full(s.push_back(tid, v));
            default: return value_or_empty(s.pop_back(tid));
        }
    }
    static dfc_response apply(model& m, std::uint64_t name, std::uint64_t v) {
        switch (name) {
            case type::push_front_op: return model_push_front(m, v);
            case type::pop_front_op: return model_pop_front(m);
            case type::push_back_op: return model_push_back(m, v);
            default: return model_pop_back(m);
        }
    }
    static model contents(const type& s) {
        auto c = s.unsynchronized_contents();
        return model(c.begin(), c.end());
    }
    static std::string check(const type& s) { return s.unsynchronized_check(); }
};

bool is_push(std::uint64_t name) { return name % 2 == 1; }  // every kind: odd = push

std::string op_text(unsigned t, std::uint64_t seq) {
    return "thread " + std::to_string(t) + " op seq " + std::to_string(seq);
}

template <class Kind>
class dfc_workload final : public sim::workload {
    using container = typename Kind::type;

public:
    dfc_workload(pmem::pool& p, const sim::run_config& c)
        : config_(c), progress_(c.threads), trace_(c.threads * c.ops_per_thread),
          observed_(c.threads, std::vector<dfc_response>(c.ops_per_thread)),
          heap_(alloc::buddy_heap::create(p, heap_offset(p, c), heap_bytes(c))),
          s_(container::create(region(p, c), bytes(c), c.threads, options(heap_), recording_trace{&trace_})) {}

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

    // Operation i of thread tid: (name, value), a function of (seed, tid, i).
    std::pair<std::uint64_t, std::uint64_t> op_of(unsigned tid, std::uint64_t i) const {
        const auto r = sim::mix(config_.seed, (std::uint64_t{tid} << 40) ^ i);
        // Slightly more pushes than pops so the structure is usually non-empty.
        std::uint64_t name = 1 + (r % Kind::names);
        if (!is_push(name) && (r >> 20) % 8 == 0) name -= 1;
        return {name, std::uint64_t{tid} << 32 | i};
    }

    void run_thread(unsigned tid) override {
        for (std::uint64_t i = 0; i < config_.ops_per_thread; ++i) {
            const auto [name, v] = op_of(tid, i);
            progress_.begin(tid);
            observed_[tid][i] = Kind::run(s_, tid, name, v);
            progress_.end(tid);
        }
    }

    const sim::op_progress& progress() const noexcept override { return progress_; }

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
        if (auto problem = check_heap(heap, image); !problem.empty()) return problem;
        const model recovered = Kind::contents(s);
        const unsigned threads = config_.threads;
        std::vector<combining::dfc_recovered_op> rec(threads);
        for (unsigned t = 0; t < threads; ++t) {
            rec[t] = s.recover(t);
            const auto k = at_crash[t].completed;
            const auto& r = rec[t];
            const bool pending = at_crash[t].pending;
            if (!(r.seq == k || (pending && r.seq == k + 1)))
                return "detectability: thread " + std::to_string(t) + " recovered seq " + std::to_string(r.seq) +
                       " but " + std::to_string(k) + " operations returned" + (pending ? " (one pending)" : "");
            if (r.seq == k && k > 0) {
                if (!r.took_effect) return "detectability: " + op_text(t, k) + " returned but is reported as not taken";
                if (!(r.response == observed_[t][k - 1]))
                    return "detectability: " + op_text(t, k) + " recovered a response other than the one it returned";
            }
            if (r.seq > 0) {
                const auto [name, v] = op_of(t, r.seq - 1);
                if (r.name != name || (is_push(name) && r.param != v))
                    return "detectability: " + op_text(t, r.seq) + " recovered with another name or parameter";
            }
        }
        // Phases of the trace (consecutive entries with one epoch). In random mode the
        // workers resume before verify() runs, so the trace may hold phases after the crash:
        // the committed prefix is some cut between the last phase holding a returned
        // operation and the first holding an operation recovery reports as not (yet) run.
        const auto n = trace_.count.load(std::memory_order_acquire);
        std::vector<std::size_t> phase_end;  // phase p = entries [phase_end[p-1], phase_end[p])
        for (std::size_t i = 0; i < n; ++i)
            if (i + 1 == n || trace_.entries[i + 1].epoch != trace_.entries[i].epoch) phase_end.push_back(i + 1);
        std::size_t lo = 0, hi = phase_end.size();  // candidate cuts: number of committed phases
        for (std::size_t p = 0, i = 0; p < phase_end.size(); ++p)
            for (; i < phase_end[p]; ++i) {
                const auto& e = trace_.entries[i];
                if (e.seq <= at_crash[e.tid].completed) lo = p + 1;
                const auto& r = rec[e.tid];
                if ((e.seq > r.seq || (e.seq == r.seq && !r.took_effect)) && hi > p) hi = p;
            }
        if (lo > hi)
            return "an operation that returned was applied after one that recovery lost (phases " +
                   std::to_string(lo) + " > " + std::to_string(hi) + ")";
        std::string first_problem;
        for (std::size_t cut = hi + 1; cut-- > lo && hi - cut < 64;) {
            auto problem = check_history(cut == 0 ? 0 : phase_end[cut - 1], rec, recovered, at_crash);
            if (problem.empty()) return check_after_recovery(s, heap, image, rec, recovered);
            if (first_problem.empty()) first_problem = std::move(problem);
        }
        return first_problem;
    }

private:
    // The recovered structure keeps working: every thread pushes one more value (push
    // operations are the odd names of every kind), which must answer as the model says and,
    // after the structure is opened and recovered once more, be in it and be each thread's
    // latest operation, with the next seq (recovery left each thread's active slot right).
    std::string check_after_recovery(container& s, alloc::buddy_heap& heap, pmem::pool& image,
                                     const std::vector<combining::dfc_recovered_op>& rec, model m) const {
        constexpr std::uint64_t push = 1;
        for (unsigned t = 0; t < config_.threads; ++t) {
            const std::uint64_t v = std::uint64_t{0xaf} << 56 | t;
            if (!(Kind::run(s, t, push, v) == Kind::apply(m, push, v)))
                return "after recovery: thread " + std::to_string(t) + "'s push got another response than the model's";
        }
        auto again = container::open(region(image, config_), bytes(config_), options(heap));
        if (Kind::contents(again) != m) return "after recovery: pushes made after recovery are not all in the structure";
        for (unsigned t = 0; t < config_.threads; ++t) {
            const auto r = again.recover(t);
            if (r.seq != rec[t].seq + 1 || !r.took_effect || r.param != (std::uint64_t{0xaf} << 56 | t))
                return "after recovery: thread " + std::to_string(t) + " recovered seq " + std::to_string(r.seq) +
                       ", not its push after recovery (seq " + std::to_string(rec[t].seq + 1) + ")";
        }
        return {};
    }

    // The first `upto` trace entries are the committed phases.
    std::string check_history(std::size_t upto, const std::vector<combining::dfc_recovered_op>& rec,
                              const model& recovered, const sim::progress_snapshot& at_crash) const {
        model m;
        std::set<std::pair<unsigned, std::uint64_t>> seen;
        for (std::size_t i = 0; i < upto; ++i) {
            const auto& e = trace_.entries[i];
            const auto& r = rec[e.tid];
            if (!seen.insert({e.tid, e.seq}).second) return op_text(e.tid, e.seq) + " applied twice";
            if (e.seq > r.seq) return op_text(e.tid, e.seq) + " is in a committed phase but recovery reports seq " + std::to_string(r.seq);
            if (e.seq == r.seq && !(r.took_effect && r.response == e.response))
                return op_text(e.tid, e.seq) + " is in a committed phase but recovery reports another outcome";
            if (e.seq <= at_crash[e.tid].completed && !(observed_[e.tid][e.seq - 1] == e.response))
                return op_text(e.tid, e.seq) + " returned a response other than the committed one";
            if (e.response.status == dfc_status::full) continue;  // a push without effect
            if (!(Kind::apply(m, e.name, e.param) == e.response))
                return "the committed history is not sequential: entry " + std::to_string(i) + " (" + op_text(e.tid, e.seq) + ")";
        }
        std::vector<unsigned> rest;
        for (unsigned t = 0; t < config_.threads; ++t) {
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

    // The heap is consistent and holds exactly the structure's node chunks.
    std::string check_heap(const alloc::buddy_heap& heap, pmem::pool& image) const {
        if (auto problems = heap.check(); !problems.empty()) return "heap: " + problems.front();
        const auto* table = combining::dfc_region::at(region(image, config_), config_.threads).chunks;
        std::set<std::uint64_t> chunks;
        for (auto off : table->offset)
            if (off != 0) chunks.insert(off);
        std::size_t live = 0;
        for (const auto& b : heap.blocks()) {
            if (b.state == alloc::block_state::free) continue;
            if (b.state != alloc::block_state::live)
                return std::string("heap: a block is still ") + alloc::to_string(b.state) + " after recovery";
            if (!chunks.contains(b.offset)) return "heap: leak: the live block at heap offset " + std::to_string(b.offset) + " is no node chunk";
            ++live;
        }
        if (live != chunks.size()) return "heap: a node chunk of the table is not a live block";
        return {};
    }

    sim::run_config config_;
    sim::op_progress progress_;
    trace_log trace_;
    std::vector<std::vector<dfc_response>> observed_;
    alloc::buddy_heap heap_;  // before s_: the structure grows into it
    container s_;
};

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
