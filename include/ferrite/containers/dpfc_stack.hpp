// ferrite/containers/dpfc_stack.hpp: ferrite::dpfc_stack<T> and ferrite::dpfc_queue<T>,
// a detectable persistent stack and queue on the PFC engine: DFC's detectable contract at
// PFC's price.
//
// Papers: the PFC thesis (Stuttgart 2025, ch. 5; its outlook, ch. 7, asks for a detectable
// PFC) and DFC (Rusanovsky et al., [DFC-003] in docs/references.md) for the contract:
// recover(tid) returns thread tid's latest operation's sequence number, whether it took
// effect, and its response. DFC pays for that per announcement: every operation persists its
// announcement and its valid bit (2 pwb + 2 pfence by the announcing thread) before a
// combiner may collect it. Here announcements stay volatile (PFC's publication list,
// combining/pfc.hpp); the combiner pays for detectability inside its pass: each served
// operation's result {seq, name, param, response} goes into the pass's state record (up to
// two, packed) or into the thread's result line (dpfc_layout.hpp), and the pass's ONE
// pfence orders them all, with the pushed values and the state record.
//
// The queue is the same core with pops at the front (no elimination: an enqueue and a
// dequeue meet at opposite ends; a dequeue may take a value enqueued in the same pass, which
// then is never written), the elements a ring (dpfc_layout.hpp: element k at (head + k) mod
// capacity). Below, "push" is also the queue's enqueue and "pop" its dequeue.
//
// Pass (combine), the stack's: pushes and pops of the batch are paired (each pair: push -> ack, pop -> the
// pushed value; the elements are untouched); the surplus pushes store their values above
// the size (plain stores, no pwb: deferred, below; past the capacity: `full`, no effect), the
// surplus pops answer the top elements (or `empty`). Results (format 3, dpfc_layout.hpp):
// the first operations go INLINE into the pass's state record (2 words each, as many as
// the record's 4 payload words leave after the redo values: 2, or 1 with 1-2 redo values,
// 0 with 3-4), the rest are SPILLED to their threads' result lines, each stamped with the
// pass's epoch (state epoch + 1) stored last, pwb. The state's inline results of threads
// this pass does not serve are CARRIED into the new record while it has room (the same two
// words, no write-back) and otherwise COPIED OUT to their lines, stamped with the state's
// epoch, pwb. The previous pass's deferred values that this pass keeps get a pwb of their
// lines; the record that is not the state gets {epoch E + 1, head, size, redo = the kept
// deferred values and this pass's kept pushes (at most 4), the inline results, counts,
// the check of those words}, built in DRAM and written as one line of NT stores; pfence (PP). More than 4 redo values (or more than 255 spills): every
// such line is written back and a pfence orders them before the record (two fences). At 1
// thread a pass writes back one line (its record); at 2 threads a paired push and pop too.
// LP: each response, in the order the trace records (pairs first, push then pop; then the
// surplus in batch order).
//
// Deferred write-back (as the vector core's, persistent_vector_core.hpp): a pass writes
// back none of its own pushes' lines; they ride in its record's redo. The next pass writes
// back the lines of those it keeps AND repeats them in its own record's redo (that record
// may count as the state after a crash before its pfence completed: committed_index accepts
// a whole record whose spills are all stamped, fence or not), so a third record need not
// hold them: by then the second pass's pfence has made them durable. A push popped by the
// next pass is never written back (1 thread push-pop: 1.0 pwb/op; format 1 paid 2.0). The core
// keeps how many top elements are deferred in DRAM (deferred_); after open it is the state's
// redo, which recovery has emptied. The record goes out by NT stores and the combiner keeps
// its own copy of the state (st_, cur_: what dpfc_commit wrote), so a pass neither reads
// nor stores through the cache a record line that an earlier write-back evicted: on this
// VM's clwb those two misses were the pass's costliest instructions (+8-14 % at 2..64
// threads, docs/results.md). It prefetches for write, at its start, the result lines of the
// operations past the first two (likely spilled).
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
// Crash consistency. Cached stores to one line persist in program order; NT stores to one
// line in no particular order. A pass writes the state record that is not the state with
// NT stores, sealed by a check of its words: a record on the media whose check matches is
// whole, a torn one fails it (its epoch counts as 0: no candidate); its spilled result
// lines, each whole if its epoch (stored last) is; copy-outs; value lines.
// All are queued before the one pfence, so a crash before it may persist any subset. The
// pass counts as committed only if all of it needed for detectability is durable: its
// record (which holds its inline results) AND its `spilled` lines
// (dpfc_region::committed_index: the newest record is the state if some line carries the
// next epoch, since the next pass begins after this pass's pfence, or if at least `spilled`
// lines carry its own; else the older record, made durable by the previous pass's pfence
// before this pass wrote anything, is the state). Copy-outs do not disturb that count:
// the ones stamped E + 1 are made by the pass after E + 1 (or by recovery from a committed
// record), i.e. only once E + 1 committed, so they only add to a committed record's
// count. Where a thread's latest result is: in the state's inline results, or in its line,
// or, when the state's pass committed by its record before its pfence and its copy-outs
// are lost, in the older record's inline results; that older record is intact then,
// because the next pass (which overwrites it: torn, it fails its check) begins only after
// the state's pfence. So recover(tid) (dpfc_recovered) takes the largest seq among those
// three, and recovery copies out, before it commits a record without inline results, every
// inline result of the two records that is its thread's latest and not in its line (else
// the first pass after recovery could overwrite the only copy). A committed operation's
// outcome is never lost; an uncommitted pass's spilled stamps (epoch > the state's) are
// orphans: recovery (dpfc_recover) marks them voided ("did not take effect"; seq, name and
// param stay for recover(tid)), makes that durable, and only then commits a new record
// (epoch state + 2, beyond every stamp, no redo, no inline result, spilled 0). An
// uncommitted pass's inline results vanish with its record.
// A thread whose spilled result was overwritten by an uncommitted pass recovers seq k + 1,
// not taken; one whose result never reached the media (or was inline in a lost record)
// recovers seq k, taken, with the response it returned (it returned only after its pass's
// pfence). Values: every element of a record's size whose array line may not be durable is
// in that record's redo (up to 4): its own pass's kept pushes (never written back by it)
// and the previous pass's kept pushes (written back by this pass, durable only after its
// pfence); older ones were made durable by the previous pass's pfence, which completed
// before this pass began. So whichever record recovery picks, the array copy need not be
// durable; recovery copies the redo in. Past 4, a pfence orders the lines before a record
// without redo (two fences). Pops write nothing but their result and the record.
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

// The two kinds: which end a pop takes, and the region's magic.
struct dpfc_lifo {
    static constexpr std::uint64_t magic = dpfc_stack_magic;
    static constexpr bool pops_back = true;
};
struct dpfc_fifo {
    static constexpr std::uint64_t magic = dpfc_queue_magic;
    static constexpr bool pops_back = false;
};

// The sequential core the PFC engine drives (combinable: combine(batch) noexcept).
template <class Kind, class Trace = combining::dfc_no_trace>
class dpfc_core {
public:
    using request = dpfc_request;
    using response = combining::dfc_response;
    using slot_type = combining::slot<request, response>;

    dpfc_core(void* region, dpfc_options o, Trace t)
        : r_(dpfc_region::at(region, static_cast<const dpfc_header*>(region)->threads)), opts_(o), trace_(std::move(t)),
          deferred_(r_.state[r_.newest()].redo()), served_(r_.header->threads, 0), cur_(r_.newest()), st_(r_.state[cur_]) {}  // after open's recovery: 0

    FERRITE_FLOW_ROOT void combine(std::span<slot_type*> batch) noexcept {
        using s = combining::dfc_status;
        pushes_.clear();
        pops_.clear();
        // The result lines this pass may spill to were written back in their thread's last
        // pass: ask for them now, so their misses overlap the pairing below. The state is
        // the combiner's copy (the record line is neither read nor stored through the cache).
        const auto cur = cur_;
        for (std::size_t i = 0; i < batch.size(); ++i) {
            auto* op = batch[i];
            if (i >= dpfc_inline_room) __builtin_prefetch(&r_.results[op->request.tid], 1);  // likely spilled
            (op->request.name == dpfc_push_op ? pushes_ : pops_).push_back(op);
        }
        const auto st = st_;
        const auto epoch = st.epoch + 1;
        const auto cap = r_.header->capacity;
        std::size_t paired = 0;
        if (Kind::pops_back && opts_.elimination) {
            paired = std::min(pushes_.size(), pops_.size());
            for (std::size_t i = 0; i < paired; ++i) {  // LP: the push, then its pop
                respond(*pushes_[i], {s::ack, 0});
                respond(*pops_[i], {s::value, pushes_[i]->request.param});
            }
        }
        // Positions relative to the committed head: the committed elements are [0, size),
        // the structure after each step [lo, hi). Pushes first, counted against the
        // committed size, so no slot of the committed state is written.
        values_.clear();
        for (std::size_t i = paired; i < pushes_.size(); ++i) {
            if (st.size() + values_.size() == cap) {
                respond(*pushes_[i], {s::full, 0});
                continue;
            }
            values_.push_back(pushes_[i]->request.param);
            respond(*pushes_[i], {s::ack, 0});
        }
        std::uint64_t lo = 0, hi = st.size() + values_.size();
        const auto value_at = [&](std::uint64_t p) { return p < st.size() ? r_.at(st.head(), p) : values_[p - st.size()]; };
        for (std::size_t i = paired; i < pops_.size(); ++i) {  // they may take this pass's pushes
            if (lo == hi) {
                respond(*pops_[i], {s::empty, 0});
                continue;
            }
            respond(*pops_[i], {s::value, Kind::pops_back ? value_at(--hi) : value_at(lo++)});
        }
        // The pushes still in the structure: positions [kept_from, hi), slots wrapping at
        // cap, stored through the cache; their lines are written back here only if they do
        // not ride in this pass's record (deferred write-back, as the vector core's).
        const auto kept_from = std::max(st.size(), lo);
        const auto kept = hi > kept_from ? hi - kept_from : 0;
        for (std::uint64_t p = kept_from; p < hi;) {
            const auto slot = (st.head() + p) % cap;
            const auto run = std::min(hi - p, cap - slot);
            std::memcpy(&r_.elements[slot], &values_[p - st.size()], run * 8);
            p += run;
        }
        // The previous pass's deferred pushes, positions [size - deferred_, size): those
        // this pass keeps ([from, to)) are written back now and repeated in this pass's
        // record, which holds everything from `from` up (this pass's record may count as
        // the state before its pfence completes: committed_index), so the record after it
        // need not hold them.
        const auto from = std::max(st.size() - std::min(deferred_, st.size()), lo);
        const auto to = std::min(st.size(), hi);
        const auto redo = hi > from ? hi - from : 0;
        const auto head = (st.head() + lo) % cap;
        const bool one = redo <= dpfc_redo_room && opts_.one_fence && batch.size() <= dpfc_spilled_limit;
        const auto room = one ? std::min(dpfc_inline_room, (dpfc_payload_words - redo) / 2) : dpfc_inline_room;
        // Results: the first `room` operations whose seq fits go inline into the record, the
        // rest are spilled to their lines, stamped with the pass's epoch last in the line.
        std::uint64_t inl = 0, spilled = 0;
        for (auto* op : batch) {
            const auto& q = op->request;
            served_[q.tid] = epoch;
            if (inl < room && dpfc_inline::fits(q.seq)) {
                inline_[2 * inl] = dpfc_inline::pack(q.tid, q.seq, q.name, op->response);
                inline_[2 * inl + 1] = dpfc_inline::value(q.name, q.param, op->response);
                ++inl;
                continue;
            }
            pmem::pwb(&dpfc_store_result(r_, {q.tid, q.seq, q.name, q.param, op->response}, epoch));
            ++spilled;
        }
        // The state's inline results of threads this pass does not serve: CARRIED into this
        // pass's record while it has room (the same two words: no write-back), else COPIED
        // OUT to their lines, stamped with the state's epoch, before this pass's pfence: the
        // pass after this one overwrites the state's record.
        for (std::uint64_t k = 0; k < st.inlined(); ++k) {
            if (served_[dpfc_inline::at(st, k).tid] == epoch) continue;  // superseded by this pass's operation
            if (inl < room) {
                inline_[2 * inl] = st.inline_words()[2 * k];
                inline_[2 * inl + 1] = st.inline_words()[2 * k + 1];
                ++inl;
                continue;
            }
            pmem::pwb(&dpfc_store_result(r_, dpfc_inline::at(st, k), st.epoch));
        }
        if (one) {  // PP: the pass, with one pfence
            for (std::uint64_t p = from; p < to;) {
                const auto slot = (st.head() + p) % cap;
                const auto run = std::min(to - p, cap - slot);
                pmem::pwb_range(&r_.elements[slot], run * 8);
                p += run;
            }
            for (std::uint64_t p = from; p < hi; ++p) redo_[p - from] = value_at(p);
            st_ = dpfc_commit(r_, cur, epoch, head, hi - lo, redo_, redo, inline_, inl, spilled);
            cur_ = 1 - cur;
            deferred_ = kept;
        } else {
            for (std::uint64_t p = from; p < hi;) {  // the deferred ones kept and this pass's
                const auto slot = (st.head() + p) % cap;
                const auto run = std::min(hi - p, cap - slot);
                pmem::pwb_range(&r_.elements[slot], run * 8);
                p += run;
            }
            // PP: the values (and more spills than a record counts) are durable before the record
            if (redo > 0 || spilled > dpfc_spilled_limit) pmem::pfence();
            st_ = dpfc_commit(r_, cur, epoch, head, hi - lo, nullptr, 0, inline_, inl, spilled > dpfc_spilled_limit ? 0 : spilled);
            cur_ = 1 - cur;
            deferred_ = 0;
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
    FERRITE_FLOW_SKIP Trace trace_;
    FERRITE_FLOW_SKIP std::vector<slot_type*> pushes_, pops_;  // combiner's scratch
    FERRITE_FLOW_SKIP std::vector<std::uint64_t> values_;      // the pass's accepted pushes, in order
    FERRITE_FLOW_SKIP std::uint64_t deferred_ = 0;  // the state's top elements whose lines are not written back yet (DRAM only)
    FERRITE_FLOW_SKIP std::uint64_t redo_[dpfc_redo_room] = {};  // combiner's scratch: the record's redo values
    FERRITE_FLOW_SKIP std::vector<std::uint64_t> served_;  // per thread id: the last pass (epoch) that served it (DRAM only)
    FERRITE_FLOW_SKIP std::uint64_t inline_[2 * dpfc_inline_room] = {};  // combiner's scratch: the record's inline results
    FERRITE_FLOW_SKIP std::uint64_t cur_;  // the state record's index (the newest while running)
    FERRITE_FLOW_SKIP dpfc_state st_;      // a copy of it, as dpfc_commit wrote it (DRAM only)
};

}  // namespace containers

namespace containers {

// What dpfc_stack and dpfc_queue share: create/open in a region, detectability, the words
// their operations carry. Derived (the container) gets itself back from create and open.
template <class Derived, class T, class Kind, class EngineSelector, class Trace>
class dpfc_structure {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8,
                  "dpfc structures store elements in 64-bit words: use a trivially copyable type of at most 8 bytes");
    using core = dpfc_core<Kind, Trace>;
    using handle = combined<core, EngineSelector>;
    static constexpr const char* kind = Kind::pops_back ? "dpfc_stack" : "dpfc_queue";

public:
    using value_type = T;
    using recovered_op = combining::dfc_recovered_op;

    static constexpr std::size_t required_bytes(unsigned threads, std::uint64_t capacity) noexcept {
        return dpfc_required_bytes(threads, capacity);
    }
    // A new empty structure of `capacity` elements for thread ids 0..threads-1 in `bytes`
    // bytes at `region` (64-byte aligned), durable when this returns (its magic written
    // back last).
    static Derived create(void* region, std::size_t bytes, unsigned threads, std::uint64_t capacity,
                          dpfc_options o = {}, Trace t = {}) {
        const auto need = required_bytes(threads, capacity);
        if (threads == 0 || capacity == 0 || need == 0)
            throw usage_error(std::string(kind) + ": needs 1 to 65536 thread ids and at least one element of capacity");
        if (need > bytes)
            throw usage_error(std::string(kind) + ": " + std::to_string(threads) + " thread ids and " +
                              std::to_string(capacity) + " elements need " + std::to_string(need) +
                              " bytes, the region has " + std::to_string(bytes));
        if (reinterpret_cast<std::uintptr_t>(region) % 64 != 0)
            throw usage_error(std::string(kind) + ": the region must be 64-byte aligned (e.g. a pool root)");
        std::memset(region, 0, dpfc_region::elements_offset(threads));
        auto r = dpfc_region::at(region, threads);
        r.header->threads = threads;
        r.header->capacity = capacity;
        r.header->element_size = 8;
        r.state[0].epoch = 1;  // the state: empty
        r.state[0].seal();
        pmem::pwb_range(region, dpfc_region::elements_offset(threads));
        pmem::pfence();
        r.header->magic = Kind::magic;  // the commit point of create
        pmem::pwb(r.header);
        pmem::pfence();
        return Derived(dpfc_structure(region, o, std::move(t)));
    }
    // The structure created earlier at `region`, validated (damaged_pool, nothing written)
    // and recovered (dpfc_recover: restartable after a crash inside it).
    static Derived open(void* region, std::size_t bytes, dpfc_options o = {}, Trace t = {}) {
        dpfc_validate(region, bytes, Kind::magic);
        dpfc_recover(region);
        return Derived(dpfc_structure(region, o, std::move(t)));
    }
    // Read-only: every check open() makes (catalog, `pool check`).
    static void validate(const void* region, std::size_t bytes) { dpfc_validate(region, bytes, Kind::magic); }

    // ---- recovery and detectability ----------------------------------------------------
    void recover() {}  // open() recovered; kept for DFC's handle vocabulary
    // What became of `tid`'s latest operation.
    recovered_op recover(unsigned tid) const {
        check_tid(tid);
        return dpfc_recovered(region_, tid);
    }
    // The seq `tid`'s next operation will carry (log it before running the operation).
    std::uint64_t next_seq(unsigned tid) const {
        check_tid(tid);
        return next_[tid];
    }
    unsigned threads() const noexcept { return static_cast<unsigned>(header().threads); }

    combining::combining_stats stats() const noexcept { return c_.stats(); }
    double mean_batch_size() const noexcept { return c_.mean_batch_size(); }
    Trace& trace() noexcept { return c_.core().trace(); }

protected:
    dpfc_structure(void* region, dpfc_options o, Trace t) : region_(region), c_(region, o, std::move(t)) {
        const auto n = header().threads;
        next_ = std::make_unique<std::uint64_t[]>(n);
        const auto cur = this->region().committed_index();
        for (std::uint64_t i = 0; i < n; ++i) next_[i] = dpfc_recovered(region, static_cast<unsigned>(i), cur).seq + 1;
    }
    // False if the structure is at its capacity (nothing was pushed).
    bool push_word(unsigned tid, const T& v) {
        std::uint64_t w = 0;
        std::memcpy(&w, &v, sizeof(T));
        return apply(tid, dpfc_push_op, w).status == combining::dfc_status::ack;
    }
    std::optional<T> pop_word(unsigned tid) {
        const auto r = apply(tid, dpfc_pop_op, 0);
        if (r.status != combining::dfc_status::value) return std::nullopt;
        T v;
        std::memcpy(&v, &r.value, sizeof(T));
        return v;
    }
    // The elements from position 0 (a stack's bottom, a queue's front) on (quiescent only).
    std::vector<T> elements() const {
        const auto r = region();
        const auto& st = r.committed();
        std::vector<T> out;
        for (std::uint64_t k = 0; k < st.size(); ++k) {
            T v;
            std::memcpy(&v, &r.at(st.head(), k), sizeof(T));
            out.push_back(v);
        }
        return out;
    }

private:
    const dpfc_header& header() const noexcept { return *static_cast<const dpfc_header*>(region_); }
    dpfc_region region() const noexcept { return dpfc_region::at(region_, header().threads); }
    void check_tid(unsigned tid) const {
        if (tid >= header().threads)
            throw usage_error(std::string(kind) + ": thread id " + std::to_string(tid) + " is not below the " +
                              std::to_string(header().threads) + " it was created for");
    }
    combining::dfc_response apply(unsigned tid, std::uint64_t name, std::uint64_t param) {
        check_tid(tid);
        return c_.apply({tid, next_[tid]++, name, param});
    }

    void* region_;
    handle c_;  // holds the engine on the heap: moves keep its address
    std::unique_ptr<std::uint64_t[]> next_;  // per thread id: the next seq (volatile)
};

}  // namespace containers

template <class T, class EngineSelector = containers::use_pfc, class Trace = combining::dfc_no_trace>
class dpfc_stack : public containers::dpfc_structure<dpfc_stack<T, EngineSelector, Trace>, T, containers::dpfc_lifo,
                                                     EngineSelector, Trace> {
    using base = containers::dpfc_structure<dpfc_stack, T, containers::dpfc_lifo, EngineSelector, Trace>;
    friend base;
    explicit dpfc_stack(base&& b) : base(std::move(b)) {}

public:
    enum : std::uint64_t { push_op = containers::dpfc_push_op, pop_op = containers::dpfc_pop_op };
    // False if the stack is at its capacity (nothing was pushed).
    bool push(unsigned tid, const T& v) { return this->push_word(tid, v); }
    // The top element, removed; nullopt if the stack was empty.
    std::optional<T> pop(unsigned tid) { return this->pop_word(tid); }
    // Elements from the top down, as dfc_stack's (quiescent only).
    std::vector<T> unsynchronized_contents() const {
        auto e = this->elements();
        return {e.rbegin(), e.rend()};
    }
};

template <class T, class EngineSelector = containers::use_pfc, class Trace = combining::dfc_no_trace>
class dpfc_queue : public containers::dpfc_structure<dpfc_queue<T, EngineSelector, Trace>, T, containers::dpfc_fifo,
                                                     EngineSelector, Trace> {
    using base = containers::dpfc_structure<dpfc_queue, T, containers::dpfc_fifo, EngineSelector, Trace>;
    friend base;
    explicit dpfc_queue(base&& b) : base(std::move(b)) {}

public:
    enum : std::uint64_t { enqueue_op = containers::dpfc_push_op, dequeue_op = containers::dpfc_pop_op };
    // False if the queue is at its capacity (nothing was enqueued).
    bool enqueue(unsigned tid, const T& v) { return this->push_word(tid, v); }
    // The front element, removed; nullopt if the queue was empty.
    std::optional<T> dequeue(unsigned tid) { return this->pop_word(tid); }
    // Elements front first, as dfc_queue's (quiescent only).
    std::vector<T> unsynchronized_contents() const { return this->elements(); }
};

}  // namespace ferrite
