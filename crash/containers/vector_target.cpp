// crash/containers/vector_target.cpp: crash targets vector-pfc and vector-fpfc.
//
// Workload: each thread runs a seeded mix of push_back (unique values), pop_back, swap and
// get over small indices, and reserve, on a vector that starts with capacity 2 (so growth,
// and the heap's confirm protocol, happen all the time), in a pool whose heap is a
// ferrite::alloc::buddy_heap.
//
// The combiner records, through the vector's Trace policy, every request in the order it
// took effect (its linearization order) with its response, and marks the end of each pass
// (when everything applied so far is durable). Each thread notes, after each operation
// returns, how much of the trace was durable then.
//
// Recovery: heap.recover(); vector::recover; heap.finish_recovery().
// Checker:
//   * the trace is a sequential vector history: replaying it, every recorded response is
//     what a sequential vector returns (elimination, swaps, pops beyond empty...);
//   * durable linearizability: the recovered contents equal the replay of some prefix of
//     the trace that contains every operation that returned before the crash;
//   * the heap is consistent (buddy_heap::check) and holds exactly two live blocks, the
//     vector's header and its array: nothing leaked, nothing pending after recovery.
#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/containers/vector.hpp"
#include "ferrite/sim/rng.hpp"
#include "targets.hpp"

namespace ferrite::crash {
namespace {

using containers::vector_op;
using heap_type = alloc::buddy_heap;
using element = std::uint64_t;

constexpr std::uint64_t heap_offset = 4096 + 64;  // after the pool header and the anchor line
constexpr std::uint64_t heap_bytes = 192 * 1024;
constexpr std::uint64_t pool_bytes = 256 * 1024;

struct trace_entry {
    vector_op op;
    std::uint64_t a, b;
    element value;
    bool ok;
    element out_value;
    std::uint64_t out_n;
};

// Shared between the combiners (writers, one at a time) and the checker.
struct trace_log {
    explicit trace_log(std::size_t n) : entries(std::make_unique<trace_entry[]>(n)), capacity(n) {}
    std::unique_ptr<trace_entry[]> entries;
    std::size_t capacity;
    std::atomic<std::size_t> count{0};
    std::atomic<std::size_t> durable{0};  // entries of finished passes
};

struct recording_trace {
    trace_log* log = nullptr;
    template <class Request, class Response>
    void applied(const Request& r, const Response& s) noexcept {
        const auto n = log->count.load(std::memory_order_relaxed);
        if (n == log->capacity) return;  // cannot happen: one entry per operation
        log->entries[n] = {r.op, r.a, r.b, r.value, s.ok, s.value, s.n};
        log->count.store(n + 1, std::memory_order_release);
    }
    void pass_done() noexcept {
        log->durable.store(log->count.load(std::memory_order_relaxed), std::memory_order_release);
    }
};

// A sequential vector: the specification the trace is checked against.
struct model {
    std::vector<element> v;
    // Applies e; false if e's recorded response is not what the specification returns.
    bool apply(const trace_entry& e) {
        switch (e.op) {
            case vector_op::push_back: if (e.ok) v.push_back(e.value); return true;  // may fail: heap
            case vector_op::pop_back: {
                if (v.empty()) return !e.ok;
                const auto x = v.back();
                v.pop_back();
                return e.ok && e.out_value == x;
            }
            case vector_op::get: return e.a < v.size() ? e.ok && e.out_value == v[e.a] : !e.ok;
            case vector_op::swap:
                if (e.a >= v.size() || e.b >= v.size()) return !e.ok;
                std::swap(v[e.a], v[e.b]);
                return e.ok;
            case vector_op::size: return e.out_n == v.size();
            case vector_op::capacity: return e.out_n >= v.size();
            case vector_op::reserve: return true;
        }
        return false;
    }
};

template <class Selector>
class vector_workload final : public sim::workload {
    using vec = ferrite::vector<element, heap_type, Selector, recording_trace>;

public:
    vector_workload(pmem::pool& p, const sim::run_config& c)
        : config_(c), progress_(c.threads), trace_(c.threads * c.ops_per_thread),
          durable_at_return_(c.threads, std::vector<std::size_t>(c.ops_per_thread)),
          heap_(heap_type::create(p, (anchor(p), heap_offset), heap_bytes)) {  // root first: it zero-fills
        vector_.emplace(vec::create(p, heap_, anchor(p), 2, {}, recording_trace{&trace_}));
    }

    void run_thread(unsigned tid) override {
        auto& v = *vector_;
        for (std::uint64_t i = 0; i < config_.ops_per_thread; ++i) {
            const auto r = sim::mix(config_.seed, (std::uint64_t{tid} << 40) ^ i);
            progress_.begin(tid);
            // Indices up to 23 span three cache lines of elements, so that a swap can be torn
            // between lines and only its undo log saves it.
            switch (r % 20) {
                case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 8:
                    v.push_back((std::uint64_t{tid} + 1) << 32 | i);
                    break;
                case 9: case 10: case 11: case 12: (void)v.pop_back(); break;
                case 13: case 14: case 15: case 16: v.swap(r >> 8 & 15, (r >> 12 & 15) + 8); break;
                case 17: case 18: (void)v.get(r >> 8 & 31); break;
                default: v.reserve(r >> 8 & 63); break;
            }
            durable_at_return_[tid][i] = trace_.durable.load(std::memory_order_acquire);
            progress_.end(tid);
        }
    }

    const sim::op_progress& progress() const noexcept override { return progress_; }

    void recover(pmem::pool& image) const override {
        auto heap = heap_type::open(image, heap_offset);
        heap.recover();
        vec::recover(image, heap, anchor(image));
        heap.finish_recovery();
    }

    std::string verify(pmem::pool& image, const sim::progress_snapshot& at_crash) const override {
        auto heap = heap_type::open(image, heap_offset);
        if (auto problems = heap.check(); !problems.empty()) return "heap inconsistent: " + problems.front();
        auto v = vec::open(image, heap, anchor(image));
        const auto* h = containers::persistent_vector_core<element, heap_type>::open(image, anchor(image));
        std::size_t live = 0;
        for (const auto& b : heap.blocks()) {
            if (b.state == alloc::block_state::free) continue;
            ++live;
            const auto* p = static_cast<const std::byte*>(heap.at(b.offset));
            if (b.state != alloc::block_state::live)
                return std::string("a block is still ") + alloc::to_string(b.state) + " after recovery";
            if (p != reinterpret_cast<const std::byte*>(h) && p != image.base() + h->data)
                return "leak: a live heap block at heap offset " + std::to_string(b.offset) +
                       " is neither the vector's header nor its array";
        }
        if (live != 2) return "the heap holds " + std::to_string(live) + " live blocks, not 2";
        const auto view = v.unsynchronized_view();
        const std::vector<element> recovered(view.begin(), view.end());

        std::size_t must_include = 0;  // trace entries every returned operation lies within
        for (unsigned t = 0; t < config_.threads; ++t)
            if (at_crash[t].completed > 0)
                must_include = std::max(must_include, durable_at_return_[t][at_crash[t].completed - 1]);
        const auto n = trace_.count.load(std::memory_order_acquire);
        model m;
        for (std::size_t k = 0;; ++k) {
            if (k >= must_include && m.v == recovered) return {};
            if (k == n) break;
            if (!m.apply(trace_.entries[k]))
                return "the combiner's history is not a sequential vector's: entry " + std::to_string(k) +
                       " (op " + std::to_string(static_cast<int>(trace_.entries[k].op)) + ") returned a wrong response";
        }
        return "recovered " + std::to_string(recovered.size()) +
               " elements, which is no state between the " + std::to_string(must_include) +
               " operations durable before the crash and the " + std::to_string(n) + " applied";
    }

private:
    static std::uint64_t& anchor(pmem::pool& p) {
        return *static_cast<std::uint64_t*>(p.root_bytes(64 + heap_bytes));
    }

    sim::run_config config_;
    sim::op_progress progress_;
    trace_log trace_;
    std::vector<std::vector<std::size_t>> durable_at_return_;
    heap_type heap_;
    std::optional<vec> vector_;
};

template <class Selector>
std::unique_ptr<sim::target> make_target(const char* name, const char* summary) {
    return std::make_unique<sim::simple_target>(
        name, summary,
        [](pmem::pool& p, const sim::run_config& c) { return std::make_unique<vector_workload<Selector>>(p, c); },
        [](const sim::run_config&) { return pool_bytes; });
}

}  // namespace

void register_vector_targets(sim::target_registry& r) {
    r.add(make_target<containers::use_pfc>(
        "vector-pfc", "ferrite::vector on PFC: push/pop/swap/get/reserve from capacity 2, buddy heap"));
    r.add(make_target<containers::use_fpfc>(
        "vector-fpfc", "ferrite::vector on FPFC: push/pop/swap/get/reserve from capacity 2, buddy heap"));
}

}  // namespace ferrite::crash
