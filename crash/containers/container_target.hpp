// crash/containers/container_target.hpp: what the crash targets of ferrite's combining
// containers (vector, stack, queue, deque) share: the recorded linearization order, the
// durable-linearizability check against a sequential model, and the heap check.
//
// A target supplies a Spec (below). The workload creates the structure with capacity 2 (so
// growth, and the heap's confirm protocol, happen all the time) in a pool whose heap is a
// ferrite::alloc::buddy_heap, and runs each thread's seeded operations.
//
// The combiner records, through the structure's Trace policy, every request in the order it
// took effect (its linearization order) with its response, and marks the end of each pass
// (when everything applied so far is durable). Each thread notes, after each operation
// returns, how much of the trace was durable then.
//
// Recovery: heap.recover(); Spec::recover; heap.finish_recovery().
// Checker:
//   * the trace is a sequential history of the structure: replaying it on Spec::model,
//     every recorded response is what the sequential structure returns;
//   * durable linearizability: the recovered contents equal the replay of some prefix of
//     the trace that contains every operation that returned before the crash;
//   * the heap is consistent (buddy_heap::check) and its live blocks are exactly the ones
//     the structure references (Spec::blocks): nothing leaked, nothing pending;
//   * once those pass, the recovered structure keeps working (check_after_recovery): one
//     more thread pops 4 elements and pushes until the array grows (when it is at most 64
//     elements from full; else 4 pushes), then, in a second round, runs a seeded mix of
//     operations. Every response must be the model's, continued from the recovered state,
//     and after each round a clean restart (recovery again) must leave the model's
//     contents, a consistent heap and exactly the structure's blocks live.
//
// Spec:
//   using entry;        // one trace entry: default-constructible, entry(request, response)
//   using model;        // bool apply(const entry&); `items`: a range of element_type
//   using structure;    // the container, with recording_trace<entry> as its Trace
//   static structure create(pmem::pool&, heap_type&, std::uint64_t& anchor, recording_trace<entry>);
//   static structure open(pmem::pool&, heap_type&, std::uint64_t anchor, recording_trace<entry> = {});
//   static void run_op(structure&, unsigned tid, std::uint64_t i, std::uint64_t random);
//   static void push(structure&, element_type);  static void pop(structure&);
//   static std::uint64_t capacity(pmem::pool&, std::uint64_t anchor);  // elements, from the media
//   static std::vector<element_type> contents(const structure&);   // single-threaded
//   static std::vector<const std::byte*> blocks(pmem::pool&, std::uint64_t anchor);
//   static constexpr const char* name;  // "vector", for messages
//   (recover: structure::recover(pool, heap, anchor))
#pragma once

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/sim/rng.hpp"
#include "ferrite/sim/target.hpp"

namespace ferrite::crash {

namespace container_check {

using heap_type = alloc::buddy_heap;
using element_type = std::uint64_t;

inline constexpr std::uint64_t heap_offset = 4096 + 64;  // after the pool header and the anchor line
inline constexpr std::uint64_t heap_bytes = 192 * 1024;
inline constexpr std::uint64_t pool_bytes = 256 * 1024;

// Shared between the combiners (writers, one at a time) and the checker.
template <class Entry>
struct trace_log {
    explicit trace_log(std::size_t n) : entries(std::make_unique<Entry[]>(n)), capacity(n) {}
    std::unique_ptr<Entry[]> entries;
    std::size_t capacity;
    std::atomic<std::size_t> count{0};
    std::atomic<std::size_t> durable{0};  // entries of finished passes
};

template <class Entry>
struct recording_trace {
    trace_log<Entry>* log = nullptr;
    template <class Request, class Response>
    void applied(const Request& r, const Response& s) noexcept {
        const auto n = log->count.load(std::memory_order_relaxed);
        if (n == log->capacity) return;  // cannot happen: one entry per operation
        log->entries[n] = Entry(r, s);
        log->count.store(n + 1, std::memory_order_release);
    }
    void pass_done() noexcept {
        log->durable.store(log->count.load(std::memory_order_relaxed), std::memory_order_release);
    }
};

// A value unique to (thread, operation), so that nothing can be invented or duplicated unseen.
inline element_type unique_value(unsigned tid, std::uint64_t i) { return (element_type{tid} + 1) << 32 | i; }

// The persistent word the structure's header offset is stored in (first in the pool's root,
// the heap after it).
inline std::uint64_t& anchor(pmem::pool& p) { return *static_cast<std::uint64_t*>(p.root_bytes(64 + heap_bytes)); }

template <class Spec>
class workload final : public sim::workload {
    using entry = typename Spec::entry;
    using structure = typename Spec::structure;

public:
    workload(pmem::pool& p, const sim::run_config& c)
        : config_(c), progress_(c.threads), trace_(c.threads * c.ops_per_thread),
          durable_at_return_(c.threads, std::vector<std::size_t>(c.ops_per_thread)),
          heap_(heap_type::create(p, (anchor(p), heap_offset), heap_bytes)) {  // root first: it zero-fills
        structure_.emplace(Spec::create(p, heap_, anchor(p), recording_trace<entry>{&trace_}));
    }

    void run_thread(unsigned tid) override {
        for (std::uint64_t i = 0; i < config_.ops_per_thread; ++i) {
            const auto r = sim::mix(config_.seed, (std::uint64_t{tid} << 40) ^ i);
            progress_.begin(tid);
            Spec::run_op(*structure_, tid, i, r);
            durable_at_return_[tid][i] = trace_.durable.load(std::memory_order_acquire);
            progress_.end(tid);
        }
    }

    const sim::op_progress& progress() const noexcept override { return progress_; }

    void recover(pmem::pool& image) const override {
        auto heap = heap_type::open(image, heap_offset);
        heap.recover();
        structure::recover(image, heap, anchor(image));
        heap.finish_recovery();
    }

    std::string verify(pmem::pool& image, const sim::progress_snapshot& at_crash) const override {
        auto heap = heap_type::open(image, heap_offset);
        if (auto problem = check_heap_then_ready(image, heap); !problem.empty()) return problem;
        auto s = Spec::open(image, heap, anchor(image));
        const std::vector<element_type> recovered = Spec::contents(s);

        std::size_t must_include = 0;  // trace entries every returned operation lies within
        for (unsigned t = 0; t < config_.threads; ++t)
            if (at_crash[t].completed > 0)
                must_include = std::max(must_include, durable_at_return_[t][at_crash[t].completed - 1]);
        const auto n = trace_.count.load(std::memory_order_acquire);
        typename Spec::model m;
        for (std::size_t k = 0;; ++k) {
            if (k >= must_include && std::ranges::equal(m.items, recovered)) return check_after_recovery(image, m);
            if (k == n) break;
            if (!m.apply(trace_.entries[k]))
                return std::string("the combiner's history is not a sequential ") + Spec::name + "'s: entry " +
                       std::to_string(k) + " (op " + std::to_string(static_cast<int>(trace_.entries[k].op)) +
                       ") returned a wrong response";
        }
        return "recovered " + std::to_string(recovered.size()) + " elements, which is no state between the " +
               std::to_string(must_include) + " operations durable before the crash and the " + std::to_string(n) +
               " applied";
    }

private:
    static constexpr std::uint64_t mixed_ops_after_recovery = 16;
    static constexpr std::uint64_t max_pushes_to_grow = 64;
    static constexpr int pops_before_pushes = 4;

    // The recovered structure keeps working (see the header); `m` holds the recovered state.
    // Two rounds, each followed by a clean restart: pops and pushes first (growth; and a
    // log that recovery left armed would be replayed over the slots they rewrote), then a
    // seeded mix.
    std::string check_after_recovery(pmem::pool& image, typename Spec::model m) const {
        const unsigned tid = config_.threads;  // a new thread: its values are unique too
        std::uint64_t i = config_.ops_per_thread;
        std::string growth_problem;
        auto pushes = [&](typename Spec::structure& s) {
            for (int k = 0; k < pops_before_pushes; ++k) Spec::pop(s);  // the pushes rewrite these slots
            const std::uint64_t size = Spec::contents(s).size(), cap = Spec::capacity(image, anchor(image));
            const bool grows = cap >= size && cap - size < max_pushes_to_grow;
            const std::uint64_t n = grows ? cap - size + 1 : 4;
            for (std::uint64_t k = 0; k < n; ++k, ++i) Spec::push(s, unique_value(tid, i));
            // The model lets a push fail (heap exhausted); this one must not: the heap has room.
            if (grows && Spec::capacity(image, anchor(image)) <= cap)
                growth_problem = "after recovery, " + std::to_string(n) + " pushes onto " + std::to_string(size) +
                                 " elements did not grow the " + Spec::name + "'s capacity of " + std::to_string(cap);
        };
        auto mix = [&](typename Spec::structure& s) {
            for (std::uint64_t k = 0; k < mixed_ops_after_recovery; ++k, ++i)
                Spec::run_op(s, tid, i, sim::mix(config_.seed ^ 0xaf7e5u, i));
        };
        if (auto problem = run_and_restart(image, m, pushes, "pushes"); !problem.empty()) return problem;
        if (!growth_problem.empty()) return growth_problem;
        return run_and_restart(image, m, mix, "a mix of operations");
    }

    template <class Ops>
    std::string run_and_restart(pmem::pool& image, typename Spec::model& m, Ops&& ops, const char* what) const {
        const std::string where = std::string("after recovery, ") + what + " on the " + Spec::name + ": ";
        trace_log<entry> log(pops_before_pushes + max_pushes_to_grow + mixed_ops_after_recovery + 1);
        {
            auto heap = heap_type::open(image, heap_offset);
            ready(heap);  // the image was checked since its recovery
            auto s = Spec::open(image, heap, anchor(image), recording_trace<entry>{&log});
            ops(s);
        }
        const auto n = log.count.load(std::memory_order_acquire);
        if (n == log.capacity) return where + "the checker's trace is full (a bug of the checker)";
        for (std::size_t k = 0; k < n; ++k)
            if (!m.apply(log.entries[k]))
                return where + "operation " + std::to_string(k) + " (op " +
                       std::to_string(static_cast<int>(log.entries[k].op)) + ") answered otherwise than the model";
        recover(image);  // a clean restart
        auto heap = heap_type::open(image, heap_offset);
        if (auto problem = check_heap_then_ready(image, heap); !problem.empty()) return where + problem;
        if (!std::ranges::equal(m.items, Spec::contents(Spec::open(image, heap, anchor(image)))))
            return where + "after a restart the contents are not the model's";
        return {};
    }

    // A heap object opened over a recovered image starts in its needs-recovery phase, and
    // the containers refuse to open on it. The image is recovered: recover() and
    // finish_recovery() only move the object on (they would reclaim pending blocks, so
    // check_heap_then_ready looks for those first).
    static void ready(heap_type& heap) {
        heap.recover();
        heap.finish_recovery();
    }
    // The heap over a recovered image is consistent and holds exactly the structure's blocks,
    // all live; then ready(heap). Empty if so, else what is wrong.
    static std::string check_heap_then_ready(pmem::pool& image, heap_type& heap) {
        if (auto problems = heap.check(); !problems.empty()) return "heap inconsistent: " + problems.front();
        if (auto leak = check_blocks(heap, Spec::blocks(image, anchor(image))); !leak.empty()) return leak;
        ready(heap);
        return {};
    }

    // Every non-free block is live and one of `expected` (and each of those is live).
    static std::string check_blocks(const heap_type& heap, const std::vector<const std::byte*>& expected) {
        std::size_t live = 0;
        for (const auto& b : heap.blocks()) {
            if (b.state == alloc::block_state::free) continue;
            ++live;
            if (b.state != alloc::block_state::live)
                return std::string("a block is still ") + alloc::to_string(b.state) + " after recovery";
            const auto* p = static_cast<const std::byte*>(heap.at(b.offset));
            if (std::find(expected.begin(), expected.end(), p) == expected.end())
                return "leak: a live heap block at heap offset " + std::to_string(b.offset) + " is not one the " +
                       Spec::name + " references";
        }
        if (live != expected.size())
            return "the heap holds " + std::to_string(live) + " live blocks, not " + std::to_string(expected.size());
        return {};
    }

    sim::run_config config_;
    sim::op_progress progress_;
    trace_log<entry> trace_;
    std::vector<std::vector<std::size_t>> durable_at_return_;
    heap_type heap_;
    std::optional<structure> structure_;
};

// `mutation_scope`: see sim::target::mutation_scope (empty: every site reached).
template <class Spec>
std::unique_ptr<sim::target> make_target(const char* name, const char* summary,
                                         std::vector<std::string> mutation_scope = {}) {
    return std::make_unique<sim::simple_target>(
        sim::simple_target(
            name, summary,
            [](pmem::pool& p, const sim::run_config& c) { return std::make_unique<workload<Spec>>(p, c); },
            [](const sim::run_config&) { return pool_bytes; })
            .with_mutation_scope(std::move(mutation_scope)));
}

}  // namespace container_check

}  // namespace ferrite::crash
