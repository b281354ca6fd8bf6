// ferrite/containers/dpfc_stack.hpp: ferrite::dpfc_stack<T>, a detectable persistent stack on
// the PFC engine: DFC's detectable contract at PFC's price.
//
// Papers: the PFC thesis (Stuttgart 2025, ch. 5; its outlook, ch. 7, asks for a detectable
// PFC) and DFC (Rusanovsky et al., [DFC-003] in docs/references.md) for the contract:
// recover(tid) returns thread tid's latest operation's sequence number, whether it took
// effect, and its response. DFC pays for that per announcement: every operation persists its
// announcement and its valid bit (2 pwb + 2 pfence by the announcing thread) before a
// combiner may collect it. Here announcements stay volatile (PFC's publication list,
// combining/pfc.hpp); the combiner pays for detectability inside its pass: next to the
// stack's state record it writes each served operation's result record {seq, name, param,
// response} (one line per thread id, dpfc_layout.hpp) and orders them all, with the pushed
// values and the state record, by the pass's ONE pfence.
//
// Pass (combine): pushes and pops of the batch are paired (each pair: push -> ack, pop -> the
// pushed value; the elements are untouched); the surplus pushes store their values above
// the size (stores + pwb; past the capacity: `full`, no effect), the surplus pops answer the
// top elements (or `empty`); every operation's result record gets its response, then,
// stored last in its line, the pass's epoch (state epoch + 1), pwb; the state record that is
// not the state gets {new size, redo = the surplus pushes' values if at most 5}, epoch last,
// pwb; pfence (PP). More than 5 surplus pushes: a pfence between the values and the record
// (two). LP: each response, in the order the trace records (pairs first, push then pop;
// then the surplus in batch order).
//
// What differs from DFC: an operation that no combiner collected before a crash leaves no
// trace at all; recover(tid) then reports the thread's previous operation (seq one less than
// the one the caller logged), which the caller reads as "never took effect, run it again":
// the exactly-once pattern below (the one docs/dfc.md gives for DFC, DFC defect #10) needs
// nothing more. DFC's recovery re-executes announced operations; here an operation either
// committed with its pass or did not take effect. Elements are 8-byte words (T trivially
// copyable, at most 8 bytes), in a fixed-capacity array (`full` past it, as DFC's node pool
// without a heap). One thread per thread id at a time is the caller's duty (not enforced:
// DFC's tid claims are not carried over).
//
// Crash consistency. A pass writes the state record that is not the state, {size, redo,
// served = the batch's size} with its epoch E + 1 stored last, and the served operations'
// result records, each stamped with E + 1 stored last in its line: a record or result on the
// media is whole if its epoch is. All of them, and the pushed values, are queued before the
// one pfence, so a crash before it may persist any subset. The pass counts as committed
// only if all of it needed for detectability is durable: its state record AND its `served`
// result records (dpfc_region::committed_index: the newest record is the state if some result
// carries the next epoch, since the next pass begins after this pass's pfence, or if exactly
// `served` results carry its own; else the older record, made durable by the previous pass's
// pfence before this pass wrote anything, is the state). So a committed operation's outcome
// is never lost, and an uncommitted pass's stamps (epoch > the state's) are orphans:
// recovery (dpfc_recover) marks them voided ("did not take effect"; seq, name and param
// stay for recover(tid)), makes that durable, and only then commits a new record (epoch
// state + 2, beyond every stamp, no redo, served 0).
// A thread whose previous result was overwritten by an uncommitted pass recovers seq k + 1,
// not taken; one whose result never reached the media recovers seq k, taken, with the
// response it returned (it returned only after its pass's pfence). Values: the surplus
// pushes' values ride in the state record (up to 5; redo), so the array's copy need not be
// durable before the record; recovery copies them in. Past 5, a pfence orders the values
// before the record (two fences). Pops write nothing but their result and the record.
// Validation (dpfc_validate) runs before recovery writes anything.
//
// Exactly-once usage (as dfc_stack's):
//   auto s = ferrite::dpfc_stack<std::uint64_t>::create(region, bytes, /*threads*/ 4, capacity);
//   // thread t: log (durably, in the application) seq = s.next_seq(t); then
//   s.push(t, 7);
//   // after a crash: auto s = ferrite::dpfc_stack<std::uint64_t>::open(region, bytes);  // recovers
//   auto r = s.recover(t);  // {seq, took_effect, name, param, response}
//   if (r.seq == logged_seq && r.took_effect) { /* done: r.response */ } else { /* run it again */ }
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "ferrite/combining/dfc_types.hpp"
#include "ferrite/combining/pfc.hpp"
#include "ferrite/containers/combined.hpp"
#include "ferrite/containers/dpfc_layout.hpp"
#include "ferrite/containers/vector.hpp"
#include "ferrite/error.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace ferrite {

namespace containers {

struct dpfc_request {
    unsigned tid = 0;
    std::uint64_t seq = 0, name = 0, param = 0;
};

struct dpfc_options {
    bool elimination = true;  // pair pushes with pops inside a pass
    bool one_fence = true;    // false: every pass with surplus pushes orders them with a fence of their own
};

// The sequential core the PFC engine drives (combinable: combine(batch) noexcept).
template <class Trace = combining::dfc_no_trace>
class dpfc_stack_core {
public:
    using request = dpfc_request;
    using response = combining::dfc_response;
    using slot_type = combining::slot<request, response>;

    dpfc_stack_core(void* region, dpfc_options o, Trace t)
        : r_(dpfc_region::at(region, static_cast<const dpfc_header*>(region)->threads)), opts_(o), trace_(std::move(t)) {}

    void combine(std::span<slot_type*> batch) noexcept {
        using s = combining::dfc_status;
        pushes_.clear();
        pops_.clear();
        for (auto* op : batch) (op->request.name == dpfc_push_op ? pushes_ : pops_).push_back(op);
        const auto st = r_.state[r_.newest()];
        const auto epoch = st.epoch + 1;
        std::size_t paired = 0;
        if (opts_.elimination) {
            paired = std::min(pushes_.size(), pops_.size());
            for (std::size_t i = 0; i < paired; ++i) {  // LP: the push, then its pop
                respond(*pushes_[i], {s::ack, 0});
                respond(*pops_[i], {s::value, pushes_[i]->request.param});
            }
        }
        std::uint64_t size = st.size;
        values_.clear();
        for (std::size_t i = paired; i < pushes_.size(); ++i) {
            if (size == r_.header->capacity) {
                respond(*pushes_[i], {s::full, 0});
                continue;
            }
            values_.push_back(pushes_[i]->request.param);
            ++size;
            respond(*pushes_[i], {s::ack, 0});
        }
        for (std::size_t i = paired; i < pops_.size(); ++i) {
            if (size == 0) {
                respond(*pops_[i], {s::empty, 0});
                continue;
            }
            // Surplus pops and pushes never meet here with elimination on; without it a pop
            // may take a value this pass pushed (still only in values_).
            const auto at = size - 1;
            const auto v = at >= st.size ? values_[at - st.size] : r_.elements[at];
            if (at >= st.size) values_.pop_back();
            --size;
            respond(*pops_[i], {s::value, v});
        }
        // Write-back: the results, stamped with the pass's epoch last in their lines.
        for (auto* op : batch) {
            auto& e = r_.results[op->request.tid];
            e.seq = op->request.seq;
            e.name = op->request.name;
            e.param = op->request.param;
            e.response = op->response;
            e.voided = 0;
            std::atomic_signal_fence(std::memory_order_release);  // the epoch persists no earlier
            e.epoch = epoch;
            pmem::pwb(&e);
        }
        const auto kept = values_.size();  // the surplus pushes still in the stack, at [size - kept, size)
        if (kept > 0) {
            std::memcpy(&r_.elements[size - kept], values_.data(), kept * 8);
            pmem::pwb_range(&r_.elements[size - kept], kept * 8);
        }
        const auto cur = r_.newest();  // while running, the newest record is the state
        if (kept <= dpfc_redo_room && opts_.one_fence) {
            dpfc_commit(r_, cur, epoch, size, values_.data(), kept, batch.size());  // PP: the pass, one pfence
        } else {
            if (kept > 0) pmem::pfence();  // PP: the values are durable before a record names them
            dpfc_commit(r_, cur, epoch, size, nullptr, 0, batch.size());
        }
        trace_.pass_done();
    }

    Trace& trace() noexcept { return trace_; }

private:
    void respond(slot_type& op, combining::dfc_response r) noexcept {
        op.response = r;
        const auto& q = op.request;
        trace_.applied(combining::dfc_op{q.tid, 0, q.name, q.param, q.seq, true}, r);
    }

    dpfc_region r_;
    dpfc_options opts_;
    Trace trace_;
    std::vector<slot_type*> pushes_, pops_;  // combiner's scratch
    std::vector<std::uint64_t> values_;
};

}  // namespace containers

template <class T, class EngineSelector = containers::use_pfc, class Trace = combining::dfc_no_trace>
class dpfc_stack {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8,
                  "dpfc_stack stores elements in 64-bit words: use a trivially copyable type of at most 8 bytes");
    using core = containers::dpfc_stack_core<Trace>;
    using handle = containers::combined<core, EngineSelector>;

public:
    using value_type = T;
    using recovered_op = combining::dfc_recovered_op;
    enum : std::uint64_t { push_op = containers::dpfc_push_op, pop_op = containers::dpfc_pop_op };

    static constexpr std::size_t required_bytes(unsigned threads, std::uint64_t capacity) noexcept {
        return containers::dpfc_required_bytes(threads, capacity);
    }
    // A new empty stack of `capacity` elements for thread ids 0..threads-1 in `bytes` bytes
    // at `region` (64-byte aligned), durable when this returns (its magic written back last).
    static dpfc_stack create(void* region, std::size_t bytes, unsigned threads, std::uint64_t capacity,
                             containers::dpfc_options o = {}, Trace t = {}) {
        const auto need = required_bytes(threads, capacity);
        if (threads == 0 || capacity == 0 || need == 0)
            throw usage_error("dpfc_stack: needs 1 to 65536 thread ids and at least one element of capacity");
        if (need > bytes)
            throw usage_error("dpfc_stack: " + std::to_string(threads) + " thread ids and " + std::to_string(capacity) +
                              " elements need " + std::to_string(need) + " bytes, the region has " + std::to_string(bytes));
        if (reinterpret_cast<std::uintptr_t>(region) % 64 != 0)
            throw usage_error("dpfc_stack: the region must be 64-byte aligned (e.g. a pool root)");
        std::memset(region, 0, containers::dpfc_region::elements_offset(threads));
        auto r = containers::dpfc_region::at(region, threads);
        r.header->threads = threads;
        r.header->capacity = capacity;
        r.header->element_size = 8;
        r.state[0].epoch = 1;  // the state: empty
        pmem::pwb_range(region, containers::dpfc_region::elements_offset(threads));
        pmem::pfence();
        r.header->magic = containers::dpfc_stack_magic;  // the commit point of create
        pmem::pwb(r.header);
        pmem::pfence();
        return dpfc_stack(region, o, std::move(t));
    }
    // The stack created earlier at `region`, validated (damaged_pool, nothing written) and
    // recovered (dpfc_recover: restartable after a crash inside it).
    static dpfc_stack open(void* region, std::size_t bytes, containers::dpfc_options o = {}, Trace t = {}) {
        containers::dpfc_validate(region, bytes);
        containers::dpfc_recover(region);
        return dpfc_stack(region, o, std::move(t));
    }
    // Read-only: every check open() makes (catalog, `pool check`).
    static void validate(const void* region, std::size_t bytes) { containers::dpfc_validate(region, bytes); }

    // ---- recovery and detectability ----------------------------------------------------
    void recover() {}  // open() recovered; kept for DFC's handle vocabulary
    // What became of `tid`'s latest operation.
    recovered_op recover(unsigned tid) const {
        check_tid(tid);
        return containers::dpfc_recovered(region_, tid);
    }
    // The seq `tid`'s next operation will carry (log it before running the operation).
    std::uint64_t next_seq(unsigned tid) const {
        check_tid(tid);
        return next_[tid];
    }
    unsigned threads() const noexcept { return static_cast<unsigned>(header().threads); }

    // ---- modifiers (thread `tid` in 0..threads-1, one thread per tid at a time) ----------
    // False if the stack is at its capacity (nothing was pushed).
    bool push(unsigned tid, const T& v) {
        std::uint64_t w = 0;
        std::memcpy(&w, &v, sizeof(T));
        return apply(tid, push_op, w).status == combining::dfc_status::ack;
    }
    std::optional<T> pop(unsigned tid) {
        const auto r = apply(tid, pop_op, 0);
        if (r.status != combining::dfc_status::value) return std::nullopt;
        T v;
        std::memcpy(&v, &r.value, sizeof(T));
        return v;
    }

    // ---- observers (quiescent only) --------------------------------------------------
    std::vector<T> unsynchronized_contents() const {  // top first, as dfc_stack's
        const auto r = region();
        std::vector<T> out;
        for (auto i = r.committed().size; i-- > 0;) {
            T v;
            std::memcpy(&v, &r.elements[i], sizeof(T));
            out.push_back(v);
        }
        return out;
    }
    combining::combining_stats stats() const noexcept { return c_->stats(); }
    double mean_batch_size() const noexcept { return c_->mean_batch_size(); }
    Trace& trace() noexcept { return c_->core().trace(); }

private:
    dpfc_stack(void* region, containers::dpfc_options o, Trace t)
        : region_(region), c_(std::make_unique<handle>(region, o, std::move(t))) {
        const auto n = header().threads;
        next_ = std::make_unique<std::uint64_t[]>(n);
        const auto r = this->region();
        for (std::uint64_t i = 0; i < n; ++i) next_[i] = r.results[i].seq + 1;
    }
    const containers::dpfc_header& header() const noexcept { return *static_cast<const containers::dpfc_header*>(region_); }
    containers::dpfc_region region() const noexcept { return containers::dpfc_region::at(region_, header().threads); }
    void check_tid(unsigned tid) const {
        if (tid >= header().threads)
            throw usage_error("dpfc_stack: thread id " + std::to_string(tid) + " is not below the " +
                              std::to_string(header().threads) + " the stack was created for");
    }
    combining::dfc_response apply(unsigned tid, std::uint64_t name, std::uint64_t param) {
        check_tid(tid);
        return c_->apply({tid, next_[tid]++, name, param});
    }

    void* region_;
    std::unique_ptr<handle> c_;  // moves keep the engine's address
    std::unique_ptr<std::uint64_t[]> next_;  // per thread id: the next seq (volatile)
};

}  // namespace ferrite
