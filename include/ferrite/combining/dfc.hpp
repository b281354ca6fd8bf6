// ferrite/combining/dfc.hpp: DFC, detectable flat combining (the engine of dfc_stack,
// dfc_queue and dfc_deque).
//
// Papers: M. Rusanovsky, H. Attiya, O. Ben-Baruch, T. Gerby, D. Hendler, P. Ramalhete,
// "Flat-Combining-Based Persistent Data Structures for Non-Volatile Memory" (SSS 2021,
// "004", with the queue and the deque) and the stack paper it extends ("003"): [DFC] in
// docs/references.md, which also lists the defects numbered here ("#n" = DFC defect #n).
//
// Algorithm. Every thread t (a stable id 0..N-1) owns a persistent record with two
// announcement slots and a word `valid` (bit 0: the active slot; bit 1: "ready", the papers'
// MSB). OP (alg. 1-18): write the inactive slot {status := BOTTOM, epoch, param, name, seq},
// then valid := slot | ready (no write-back, no fence: see the differences). Then wait for
// "my response is durable OR the combiner lock is free" (spin, then futex:
// sync::futex_lock::wait_for). The lock holder runs one combining phase at cEpoch = c
// (even): COLLECT every ready slot whose status is BOTTOM (stamping ann.epoch := c), let the
// structure eliminate and apply the batch on a working copy of the roots (the structure
// hooks, below), write the *inactive* root copy, pwb every collected announcement and every
// node written, ONE pfence; cEpoch := c+1, pwb, pfence (the roots share cEpoch's line, so
// this write-back persists them too: dfc_layout.hpp); cEpoch := c+2 (never written back);
// release the lock. The active roots are roots[(cEpoch/2) % 2].
// RECOVER (alg. 26-43): round an odd cEpoch up; rebuild the volatile node bitmap from the
// nodes reachable from the active roots (garbage collection); for every thread take the
// slot with the higher durable seq as the active one, set the ready bit and re-arm
// (status := BOTTOM) an active announcement collected in the crashed phase
// (ann.epoch == cEpoch); run one combining phase. Afterwards every announcement whose seq
// was durable has a durable response.
//
// The structure supplies (see dfc_stack.hpp for a complete one):
//   static constexpr unsigned root_count;                  // root words (<= 3)
//   static constexpr std::uint64_t op_names;               // its op codes are 1..op_names
//   static constexpr std::string_view kind_name;           // "dfc_stack": errors name it
//   template <class Phase> static void combine(Phase& ph) noexcept;
//       ph.ops(): the collected operations (tid order); ph.list(0..3): scratch lists;
//       ph.elimination(); ph.root(k);
//       ph.node(n); ph.allocate() (0 = pool exhausted); ph.written(n) (node n must be
//       written back before the commit); ph.free_after_commit(n); ph.respond(op, response)
//       in LINEARIZATION ORDER (eliminated pairs first, then the order applied).
//   template <class NodeAt, class Visit> static void reachable(const std::uint64_t* roots,
//       NodeAt&& node, Visit&& visit);
//       reads only: calls visit(n) for every node of the active version (recovery GC)
//       before reading node(n) (visit throws damaged_pool on a link outside the pool or a
//       cycle); throws damaged_pool (dfc_validation::damaged) on a malformed list.
//   template <class NodeAt> static void repair(const std::uint64_t* roots, NodeAt&& node);
//       after reachable() accepted the version: clear links that no committed version
//       reads (queue, deque: #8).
// The engine owns the order collect -> structure -> pwb -> pfence -> cEpoch commit ->
// publish, so every structure gets the fence order right by construction.
//
// Differences from the papers (each one a DFC defect or hazard, docs/references.md):
//   * The response is {status, value}: BOTTOM (status 1) differs from 0 and from every
//     value; a never-used slot has op name 0 ("none") and is never collected or re-armed
//     (defect #2: with "all fields 0" the paper's recovery re-arms slots never used).
//   * Every announcement carries a per-thread sequence number (seq = the active slot's + 1),
//     so after a crash a thread can tell "my last operation" from "the one before" (#10):
//     recovered(tid) reports the operation with the highest durable seq (executed, by its
//     phase or by recovery).
//   * The announcement costs its thread no persistence instruction at all (the papers: two
//     pwb and two pfence, one for the slot and one for `valid`). `valid` is volatile; the
//     active slot after a crash is the one with the higher durable seq, and seq is the
//     slot's last store, so a durable seq means a durable slot (axiom 1). The slot reaches
//     the media at the latest with the write-back of its line by the combiner that collects
//     it, which comes before that phase's commit (the response shares the line). So an
//     operation whose effect is durable has a durable announcement, and one whose seq never
//     became durable was never committed: recovered() then reports the previous seq and the
//     caller, who noted the newer one, knows to redo it. An announcement that became
//     durable without being collected (an eviction) is executed by recovery, exactly once.
//   * Waiting: a waiter returns only when its status is not BOTTOM *and* cEpoch >= the
//     collecting epoch + 2 (read from its own announcement, behind the status). The papers
//     wait for cEpoch >= opEpoch + 2 with opEpoch read before announcing; a late arrival
//     collected by the *next* phase could then see its response while that phase is not yet
//     durable and return too early (the crash campaigns find it at ~40% of crash points
//     with the papers' rule). The late-arrival retry (alg. 44-50) is subsumed.
//   * Frees are applied to the bitmap only after the phase's commit (#9, for every
//     structure), so no node of the committed version is reused inside the phase that
//     unlinks it.
//   * Recovery does not write cEpoch back after rounding it up (alg. 30): a persisted odd
//     value is rounded up the same way by every later recovery until a phase commits, and
//     each commit writes the cEpoch line back itself. Flush mutation testing showed that
//     write-back to be redundant (no crash point can tell it is missing).
//   * The two root copies share cEpoch's cache line (dfc_layout.hpp): the commit's write-back
//     of cEpoch persists the new roots with it, one pwb per phase fewer than the papers'
//     k + p + 2 (k announcements, p new nodes).
//   * A phase that collects nothing does not commit (no write-back, no fence, no epoch).
//   * Dirty nodes are written back once per cache line (two nodes share a line).
//   * The combiner lock is a sync::futex_lock (spin, then sleep: threads may outnumber
//     cores); the recovery lock a mutex (recover() may be called by every thread or once).
//   * A sticky combiner (not in the papers; defer_to_last_combiner): a waiter that did not
//     run the last phase leaves a free lock to the thread that did for an adaptive number
//     of spins, so that thread, back with its next operation, collects both and the
//     combiner's lines stay in one core. It changes who combines, never what a phase does.
//     Measured in docs/results.md (more throughput from 2 threads on; a latency cost when
//     threads take turns with pauses, kept small by the adaptation).
//   * Recovery trusts nothing (the papers' recovery trusts the media): every word open()
//     and recover() read is checked first, and a damaged region is refused with nothing
//     written (dfc_validation.hpp: each word's domain, and why no crash leaves it).
//   * A thread id is claimed by the first thread that uses it (the papers assume one thread
//     per record; two would lose acknowledged operations): dfc_tid_claims.hpp.
//
// Crash consistency
//   persistent: cEpoch, both root copies, every thread record, the nodes.
//   volatile:   the combiner lock, the node bitmap, the combiner's scratch.
//   LP: inside the combining phase, where the structure calls respond() (linearization
//       order = the order of respond() calls of the phase).
//   PP: the phase's commit, the pfence after cEpoch := c+1 is written back: from then on the
//       new root copy is active and every response of the phase durable. A thread is
//       released only after it (c+2 is visible only after c+1 persisted).
//   Announcement: an operation whose seq reached the media is executed exactly once:
//   before the commit of the phase that collected it, recovery re-arms and re-executes it
//   (epoch == cEpoch); after, its durable response stays. An operation whose seq did not
//   reach the media was not committed (the collecting combiner writes its line back before
//   the commit) and is not executed: recovered() reports the seq before it.
//
// Usage (exactly-once with the detectable API; see also docs/dfc.md):
//
//   auto s = ferrite::dfc_stack<std::uint64_t>::create(region, bytes, /*threads*/ 8);
//   // thread t: before op k, durably note "about to run op with seq s.next_seq(t)"
//   s.push(t, 42);
//   // after a restart:
//   auto s = ferrite::dfc_stack<std::uint64_t>::open(region, bytes);   // recovers
//   auto r = s.recover(t);               // {seq, took_effect, response}
//   if (r.seq == noted_seq && r.took_effect) use(r.response);   // done, exactly once
//   else /* r.seq < noted_seq, or !took_effect */ redo();      // it never took effect
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "ferrite/combining/dfc_layout.hpp"
#include "ferrite/combining/dfc_node_pool.hpp"
#include "ferrite/combining/dfc_node_store.hpp"
#include "ferrite/combining/dfc_tid_claims.hpp"
#include "ferrite/combining/dfc_types.hpp"
#include "ferrite/combining/dfc_validation.hpp"
#include "ferrite/combining/publication.hpp"
#include "ferrite/error.hpp"
#include "ferrite/pmem/counters.hpp"
#include "ferrite/pmem/primitives.hpp"
#include "ferrite/sync/futex_lock.hpp"
#include "ferrite/sync/wait_policy.hpp"

namespace ferrite::combining {

template <class S, class WaitPolicy = sync::spin_then_futex<>, class Trace = dfc_no_trace>
class dfc {
    static_assert(S::root_count >= 1 && S::root_count <= dfc_max_roots,
                  "a DFC structure has between 1 and 8 root words");

public:
    class phase;

    // ---- constructors ----------------------------------------------------------------
    // Bytes a region needs for `threads` threads and `capacity` nodes.
    static constexpr std::size_t required_bytes(unsigned threads, std::uint64_t capacity) noexcept {
        return dfc_region::bytes(threads, capacity);
    }
    // Format `bytes` bytes at `region` (64-byte aligned, zero-filled or not) for `threads`
    // threads, with as many nodes as fit. Throws usage_error if nothing fits.
    static dfc create(void* region, std::size_t bytes, unsigned threads, dfc_options o = {}, Trace tr = {}) {
        dfc_validation::check_region(region);
        if (threads == 0) throw usage_error("dfc: at least one thread id is needed");
        // At most 2^32 - 1 nodes in the region: a node index has 32 bits (dfc_node_store.hpp).
        const auto cap = std::min(dfc_region::capacity_for(bytes, threads), dfc_index_mask);
        if (cap == 0)
            throw usage_error("dfc: " + std::to_string(bytes) + " bytes hold no node for " + std::to_string(threads) +
                              " threads; give at least " + std::to_string(required_bytes(threads, 64)));
        auto r = dfc_region::at(region, threads);
        // Everything but the header is zeroed and written back before the header's magic:
        // a region whose magic is durable is a complete empty structure.
        if (o.first_growth_nodes == 0 || o.first_growth_nodes > dfc_node_store::index_mask)
            throw usage_error("dfc: first_growth_nodes must be between 1 and 2^32 - 1");
        r.epoch->epoch.store(0, std::memory_order_relaxed);
        r.chunks->first_growth_nodes = o.first_growth_nodes;
        for (auto& off : r.chunks->offset) off = 0;
        for (auto* rc : {&r.roots[0], &r.roots[1]})
            for (auto& w : rc->node) w.store(0, std::memory_order_relaxed);
        for (unsigned t = 0; t < threads; ++t) {
            auto& rec = r.threads[t];
            rec.valid.store(0, std::memory_order_relaxed);
            for (auto& a : rec.ann) {
                a.status.store(0, std::memory_order_relaxed);
                a.value.store(0, std::memory_order_relaxed);
                a.epoch.store(0, std::memory_order_relaxed);
                a.param.store(0, std::memory_order_relaxed);
                a.name.store(dfc_none_op, std::memory_order_relaxed);
                a.seq.store(0, std::memory_order_relaxed);
            }
        }
        pmem::pwb_range(r.epoch, static_cast<std::size_t>(reinterpret_cast<std::byte*>(r.nodes) -
                                                          reinterpret_cast<std::byte*>(r.epoch)));
        pmem::pfence();
        r.header->threads = threads;
        r.header->capacity = cap;
        r.header->roots = S::root_count;
        r.header->magic = dfc_magic;  // PP: create's commit point
        pmem::pwb(r.header);
        pmem::pfence();
        dfc_chunk_map m;
        m.count = 1;
        m.base[0] = r.nodes + 1;
        m.nodes[0] = cap;
        dfc d(r, m, o, std::move(tr));
        d.v_->recovered = true;  // nothing to recover: every node is free
        return d;
    }
    // Open a region formatted by create() and recover it (recover(): restartable). Throws
    // damaged_pool (dfc_validation.hpp), having written nothing, if a word of the region (or
    // of its chunk table against o.grow_from) is out of its domain. Then recovered(tid)
    // tells each thread what became of its latest operation.
    static dfc open(void* region, std::size_t bytes, dfc_options o = {}, Trace t = {}) {
        const auto r = dfc_validation::header(region, bytes, S::root_count, S::kind_name);
        const auto m = dfc_validation::chunks(r, region, bytes, o.grow_from, S::kind_name);
        dfc d(r, m, o, std::move(t));
        d.recover();
        return d;
    }

    dfc(dfc&&) noexcept = default;
    dfc& operator=(dfc&&) noexcept = default;

    // ---- operations ------------------------------------------------------------------
    // Announce operation `name` (>= 1) with `param` as thread `tid` and return its response
    // once it is durable. The first call claims tid for the calling thread until it exits
    // or calls release(tid). Throws usage_error, changing nothing, if tid is not one of the
    // structure's thread ids or another live thread holds it.
    dfc_response apply(unsigned tid, std::uint64_t name, std::uint64_t param) {
        check_tid(tid);
        if (claims_) [[likely]]
            claims_->claim(tid);
        auto& rec = r_.threads[tid];
        const std::uint64_t v = rec.valid.load(std::memory_order_relaxed);
        const unsigned slot = 1 - static_cast<unsigned>(v & 1);
        auto& a = rec.ann[slot];
        const std::uint64_t seq = rec.ann[v & 1].seq.load(std::memory_order_relaxed) + 1;
        std::uint64_t e = r_.epoch->epoch.load(std::memory_order_acquire);
        e += e & 1;
        a.status.store(static_cast<std::uint64_t>(dfc_status::bottom), std::memory_order_relaxed);
        a.value.store(0, std::memory_order_relaxed);
        a.epoch.store(e, std::memory_order_relaxed);
        a.param.store(param, std::memory_order_relaxed);
        a.name.store(name, std::memory_order_relaxed);
        a.seq.store(seq, std::memory_order_relaxed);  // last: a durable seq means a durable slot
        // No write-back and no fence here: the combiner that collects the slot writes its
        // line back before its commit (the response shares the line), and recovery takes
        // the slot with the highest durable seq as the active one.
        rec.valid.store(slot | dfc_ready_bit, std::memory_order_release);  // collectable

        const auto done = [&] {
            if (a.status.load(std::memory_order_acquire) == static_cast<std::uint64_t>(dfc_status::bottom))
                return false;
            // The collecting phase is durable once cEpoch moved two past it.
            return r_.epoch->epoch.load(std::memory_order_acquire) >= a.epoch.load(std::memory_order_relaxed) + 2;
        };
        if (const auto last = v_->last_combiner.load(std::memory_order_relaxed); last != tid && last != no_combiner)
            defer_to_last_combiner(done);
        if (v_->lock.wait_for(done)) {
            // Holding the lock: a non-BOTTOM status was answered by a finished phase.
            if (a.status.load(std::memory_order_acquire) == static_cast<std::uint64_t>(dfc_status::bottom)) {
                combine_locked();
                v_->last_combiner.store(tid, std::memory_order_relaxed);
            }
            v_->lock.unlock();
        }
        return {static_cast<dfc_status>(a.status.load(std::memory_order_acquire)),
                a.value.load(std::memory_order_relaxed)};
    }

    // Give tid back so that another thread may use it (the calling thread holds it, or
    // nobody: a no-op). Throws usage_error if another thread holds it.
    void release(unsigned tid) {
        check_tid(tid);
        if (claims_) claims_->release(tid);
    }
    // The token (sync::this_thread_token) of the thread holding tid, 0 if free or if claims
    // are off (dfc_options::tid_claims; tests).
    std::uint64_t holder(unsigned tid) const {
        check_tid(tid);
        return claims_ ? claims_->owner(tid) : 0;
    }

    // Throws usage_error if `tid` is not one of the thread ids fixed at create.
    void check_tid(unsigned tid) const {
        require_open();
        if (tid >= r_.header->threads)
            throw usage_error("dfc: thread id " + std::to_string(tid) + " is out of range: this structure has " +
                              std::to_string(r_.header->threads) + " thread ids (0.." +
                              std::to_string(r_.header->threads - 1) + "), fixed when it was created");
    }
    // The seq the next operation of `tid` will carry (for callers that log it first).
    std::uint64_t next_seq(unsigned tid) const {
        check_tid(tid);
        const auto& rec = r_.threads[tid];
        return rec.ann[rec.valid.load(std::memory_order_relaxed) & 1].seq.load(std::memory_order_relaxed) + 1;
    }

    // ---- recovery --------------------------------------------------------------------
    // Finish the crashed phase (if any), rebuild the node bitmap, execute every durably
    // announced operation. open() calls it; later calls return at once (any number of
    // threads may call it: the first does the work, the others wait, the papers' rLock).
    // Restartable after a crash inside it. Validates the epoch, the roots, every record and
    // every link before its first write (damaged_pool, nothing written: dfc_validation.hpp).
    void recover() {
        require_open();
        std::lock_guard guard(v_->recovery);
        if (v_->recovered) return;
        const std::uint64_t c = dfc_validation::epoch(r_, S::kind_name);  // rounded up
        dfc_validation::roots(r_, v_->nodes, S::root_count, S::kind_name);
        dfc_validation::records(r_, c, S::op_names, S::kind_name);
        const std::uint64_t* roots = collect_garbage(c);  // validates the links
        // Everything checked: the writes start here.
        if (r_.epoch->epoch.load(std::memory_order_relaxed) != c) {
            // The phase c-2 committed (c-1 was persisted after its pfence). No write-back:
            // see the header (every later recovery rounds the same way; a commit writes the
            // line back itself).
            r_.epoch->epoch.store(c, std::memory_order_relaxed);
        }
        v_->nodes.recover_chunks();
        S::repair(roots, [&](std::uint64_t n) -> dfc_node& { return v_->nodes.node(n); });
        const auto threads = r_.header->threads;
        for (std::uint64_t t = 0; t < threads; ++t) {
            auto& rec = r_.threads[t];
            const unsigned s = durable_slot(rec);
            auto& a = rec.ann[s];
            if (a.name.load(std::memory_order_relaxed) == dfc_none_op) continue;  // never used (#2)
            if (a.epoch.load(std::memory_order_relaxed) == c)  // collected by the crashed phase
                a.status.store(static_cast<std::uint64_t>(dfc_status::bottom), std::memory_order_relaxed);
            rec.valid.store(s | dfc_ready_bit, std::memory_order_relaxed);
        }
        v_->lock.lock();
        combine_locked();
        v_->lock.unlock();
        v_->recovered = true;
    }

    // What thread `tid` needs to know about its latest operation (call after recover()):
    // the one in the slot with the highest seq. Recovery executed it if it was not yet, so
    // it took effect; an announcement whose seq never became durable is not reported (the
    // caller who noted that seq sees a smaller one and knows it never took effect).
    dfc_recovered_op recovered(unsigned tid) const {
        check_tid(tid);
        const auto& rec = r_.threads[tid];
        const auto& a = rec.ann[durable_slot(rec)];
        dfc_recovered_op out;
        if (a.name.load(std::memory_order_relaxed) == dfc_none_op) return out;
        out.seq = a.seq.load(std::memory_order_relaxed);
        out.name = a.name.load(std::memory_order_relaxed);
        out.param = a.param.load(std::memory_order_relaxed);
        const auto st = static_cast<dfc_status>(a.status.load(std::memory_order_acquire));
        out.took_effect = st != dfc_status::bottom && st != dfc_status::none;
        if (out.took_effect) out.response = {st, a.value.load(std::memory_order_relaxed)};
        return out;
    }

    // ---- observers (quiescent use: tests, checkers, tools) -----------------------------
    unsigned threads() const noexcept { return v_->threads; }  // fixed at create: read at open
    // Throws usage_error if the region's pool (dfc_options::in_pool) was closed.
    void require_open() const {
        if (v_->options.in_pool) v_->options.in_pool->require_open(S::kind_name);
    }
    std::uint64_t capacity() const noexcept { return v_->nodes.capacity(); }  // every chunk's
    unsigned node_chunks() const noexcept { return v_->nodes.chunks(); }
    bool contains(std::uint64_t n) const noexcept { return v_->nodes.contains(n); }
    std::uint64_t epoch() const noexcept { return r_.epoch->epoch.load(std::memory_order_acquire); }
    std::uint64_t root(unsigned k) const noexcept {
        return r_.roots[(epoch() / 2) % 2].node[k].load(std::memory_order_acquire);
    }
    const dfc_node& node(std::uint64_t n) const noexcept { return v_->nodes.node(n); }
    std::uint64_t nodes_in_use() const noexcept { return v_->nodes.used(); }
    const dfc_stats& stats() const noexcept { return v_->stats; }
    // The sticky combiner (defer_to_last_combiner): a thread that did not run the last phase
    // leaves a free lock alone for between min_deferral observations (a few, so that a
    // deferral can still pay off and the budget grow again) and max_deferral; the current
    // budget is deferral_budget() (for tests).
    static constexpr unsigned min_deferral = 8;
    static constexpr unsigned max_deferral = 256;
    static constexpr unsigned no_combiner = ~0u;  // no thread has run a phase since open
    unsigned deferral_budget() const noexcept { return v_->deferral.load(std::memory_order_relaxed); }
    const dfc_options& options() const noexcept { return v_->options; }
    Trace& trace() noexcept { return v_->trace; }

    // The view of one combining phase given to the structure's combine().
    class phase {
    public:
        std::span<dfc_op> ops() noexcept { return d_.v_->ops; }
        // Scratch lists of operations for the structure (this engine's: a combine() may be
        // interrupted by a crash check that runs another engine's phase on this thread).
        std::vector<dfc_op*>& list(unsigned k) noexcept { return d_.v_->lists[k]; }
        bool elimination() const noexcept { return d_.v_->options.elimination; }
        std::uint64_t& root(unsigned k) noexcept { return d_.v_->work_roots[k]; }
        dfc_node& node(std::uint64_t n) noexcept { return d_.v_->nodes.node(n); }
        // A free node (its contents are garbage; the pool grows if it can), or 0 if the
        // pool is exhausted.
        std::uint64_t allocate() noexcept { return d_.v_->nodes.allocate(); }
        // Node n was written and is part of the new version: write it back before the commit.
        void written(std::uint64_t n) { d_.v_->dirty.push_back(n); }
        // Node n left the structure: reusable after this phase commits (#9).
        void free_after_commit(std::uint64_t n) { d_.v_->freed.push_back(n); }
        // LP: the response of `op`; calls come in linearization order.
        void respond(dfc_op& op, dfc_response r) noexcept {
            auto& a = d_.r_.threads[op.tid].ann[op.slot];
            a.value.store(r.value, std::memory_order_relaxed);
            a.status.store(static_cast<std::uint64_t>(r.status), std::memory_order_release);
            op.answered = true;
            d_.v_->trace.respond(op, r, d_.v_->phase_epoch);
        }

    private:
        friend class dfc;
        explicit phase(dfc& d) noexcept : d_(d) {}
        dfc& d_;
    };

private:
    struct volatile_state {
        alignas(line) sync::futex_lock<WaitPolicy> lock;  // cLock
        alignas(line) std::atomic<unsigned> last_combiner{no_combiner};  // tid that ran the last phase
        std::atomic<unsigned> deferral{max_deferral};            // adaptive: see defer_to_last_combiner
        alignas(line) std::mutex recovery;                // rLock
        bool recovered = false;
        unsigned threads = 0;  // the header's, validated at open
        dfc_options options;
        Trace trace;
        dfc_node_store nodes;  // chunk table binding + volatile bitmaps
        std::uint64_t phase_epoch = 0;
        std::uint64_t work_roots[dfc_max_roots] = {};
        std::vector<dfc_op> ops;  // combiner's scratch
        std::vector<dfc_op*> lists[4];  // the structure's (phase::list)
        std::vector<std::uint64_t> dirty, freed;
        std::vector<const void*> lines;
        dfc_stats stats;
    };

    // r and m validated (dfc_validation.hpp): r's header is within its bytes.
    dfc(dfc_region r, const dfc_chunk_map& m, dfc_options o, Trace t)
        : r_(r), v_(std::make_unique<volatile_state>()),
          claims_(o.tid_claims ? dfc_tid_claims::make(static_cast<unsigned>(r.header->threads), S::kind_name)
                               : nullptr) {
        v_->options = std::move(o);
        v_->threads = static_cast<unsigned>(r.header->threads);
        v_->trace = std::move(t);
        v_->nodes.attach(m, r.chunks, v_->options.grow_from);
        v_->ops.reserve(r.header->threads);
        for (auto& l : v_->lists) l.reserve(r.header->threads);
    }

    // The sticky combiner: a thread whose operation is pending, and that did not run the
    // last phase, leaves a free lock to the thread that did for up to `deferral`
    // observations, so that this thread (back with its next announcement in a few hundred
    // nanoseconds) collects both, and the combiner's lines (lock, epoch and roots, nodes,
    // bitmap, scratch) stay in one core's cache. Adaptive: a deferral that saw the lock free
    // and ended with the operation answered doubles the budget (up to max_deferral); one
    // that runs out, nobody having taken the lock (the last combiner is busy elsewhere),
    // halves it (down to min_deferral), so threads that take turns with pauses between
    // operations soon wait for each other only briefly.
    template <class Done>
    void defer_to_last_combiner(Done& done) noexcept {
        auto& v = *v_;
        const unsigned budget = v.deferral.load(std::memory_order_relaxed);
        unsigned free_seen = 0;
        // Bounded: a lock held throughout leaves the rest of the wait to lock.wait_for.
        for (unsigned i = 0; i < 4 * max_deferral; ++i) {
            if (done()) {  // answered; after leaving a free lock alone: the deferral paid
                if (free_seen > 0 && budget < max_deferral)
                    v.deferral.store(std::min(max_deferral, 2 * budget + 1), std::memory_order_relaxed);
                return;
            }
            if (!v.lock.is_locked() && ++free_seen > budget) {
                v.deferral.store(std::max(min_deferral, budget / 2), std::memory_order_relaxed);
                return;
            }
            pmem::wait_hint();
        }
    }

    // The active announcement slot of a thread record as the media holds it: the used slot
    // with the higher seq (seq is stored last in the slot's line, so a durable seq means a
    // durable slot). 0 if neither slot was ever used.
    static unsigned durable_slot(const dfc_thread_record& rec) noexcept {
        const auto seq_of = [&](unsigned s) {
            return rec.ann[s].name.load(std::memory_order_relaxed) == dfc_none_op
                       ? 0
                       : rec.ann[s].seq.load(std::memory_order_relaxed);
        };
        return seq_of(1) > seq_of(0) ? 1 : 0;
    }

    // Recovery's garbage collection: every node reachable from the active roots is in use
    // (the volatile bitmap; the walk checks every link: dfc_validation::links). Returns the
    // active root copy's words (cEpoch c, rounded).
    const std::uint64_t* collect_garbage(std::uint64_t c) {
        auto& store = v_->nodes;
        store.reset_all_free();
        dfc_validation::links<S>(r_, store, c, [&](std::uint64_t n) {
            if (!store.is_free(n)) return false;
            store.take(n);
            return true;
        });
        auto* roots = v_->work_roots;
        for (unsigned k = 0; k < S::root_count; ++k) roots[k] = r_.roots[(c / 2) % 2].node[k].load(std::memory_order_relaxed);
        return roots;
    }

    // One combining phase (alg. 51-85 with REDUCE's collection). Holds the combiner lock.
    void combine_locked() noexcept {
        auto& v = *v_;
        const auto before = pmem::thread_counters();
        const std::uint64_t c = r_.epoch->epoch.load(std::memory_order_relaxed);  // even
        v.phase_epoch = c;
        v.ops.clear();
        const auto threads = static_cast<unsigned>(r_.header->threads);
        for (unsigned t = 0; t < threads; ++t) {  // COLLECT (alg. 88-101)
            auto& rec = r_.threads[t];
            const std::uint64_t vw = rec.valid.load(std::memory_order_acquire);
            if (!(vw & dfc_ready_bit)) continue;
            const auto s = static_cast<unsigned>(vw & 1);
            auto& a = rec.ann[s];
            const auto name = a.name.load(std::memory_order_relaxed);
            if (name == dfc_none_op) continue;
            if (a.status.load(std::memory_order_relaxed) != static_cast<std::uint64_t>(dfc_status::bottom)) continue;
            a.epoch.store(c, std::memory_order_relaxed);  // before any response: same line (003:L299)
            v.ops.push_back({t, s, name, a.param.load(std::memory_order_relaxed),
                             a.seq.load(std::memory_order_relaxed), false});
        }
        if (v.ops.empty()) return;
        const unsigned active = static_cast<unsigned>((c / 2) % 2);
        for (unsigned k = 0; k < S::root_count; ++k)
            v.work_roots[k] = r_.roots[active].node[k].load(std::memory_order_relaxed);
        v.dirty.clear();
        v.freed.clear();
        phase ph(*this);
        S::combine(ph);  // LP: every respond() in it
        auto& next = r_.roots[1 - active];
        for (unsigned k = 0; k < S::root_count; ++k) next.node[k].store(v.work_roots[k], std::memory_order_relaxed);

        for (const auto& op : v.ops) pmem::pwb(&r_.threads[op.tid].ann[op.slot]);
        v.lines.clear();
        for (auto n : v.dirty)  // two nodes share a line: write each line back once
            v.lines.push_back(reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(&v.nodes.node(n)) &
                                                            ~std::uintptr_t{pmem::cache_line_size - 1}));
        std::sort(v.lines.begin(), v.lines.end());
        v.lines.erase(std::unique(v.lines.begin(), v.lines.end()), v.lines.end());
        for (const void* l : v.lines) pmem::pwb(l);
        pmem::pfence();  // responses and nodes are durable before the commit
        // The new roots were stored above in cEpoch's line: an odd cEpoch that persists
        // carries them (axiom 1), so they need no write-back of their own.
        r_.epoch->epoch.store(c + 1, std::memory_order_release);
        pmem::pwb(&r_.epoch->epoch);
        pmem::pfence();  // PP: the phase's commit point (the new roots are active)
        r_.epoch->epoch.store(c + 2, std::memory_order_release);  // releases the waiters
        for (auto n : v.freed) v.nodes.release(n);
        v.trace.phase_done(c);
        v.stats.on_phase(v.ops.size(), pmem::thread_counters() - before);
    }

    dfc_region r_;
    std::unique_ptr<volatile_state> v_;
    std::shared_ptr<dfc_tid_claims> claims_;  // volatile; shared with the threads' exit lists;
                                              // null: dfc_options::tid_claims off
};

}  // namespace ferrite::combining
