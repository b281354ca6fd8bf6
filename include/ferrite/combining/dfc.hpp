// ferrite/combining/dfc.hpp: DFC, detectable flat combining (the engine of dfc_stack,
// dfc_queue and dfc_deque).
//
// Papers: M. Rusanovsky, H. Attiya, O. Ben-Baruch, T. Gerby, D. Hendler, P. Ramalhete,
// "Flat-Combining-Based Persistent Data Structures for Non-Volatile Memory" (SSS 2021,
// "004", with the queue and the deque) and the stack paper it extends ("003"): [DFC] in
// docs/references.md, which also lists the defects numbered here ("#n" = DFC defect #n).
//
// This header is the engine's public face and the overview below; each part of the
// algorithm is in its own file, with its details, differences and crash argument:
//   dfc_format.hpp     create: formatting a region (the header's magic is the commit)
//   dfc_announce.hpp   OP: a thread's announcement, and when its response is durable
//   sticky_combiner.hpp     who runs the next phase (the sticky combiner)
//   dfc_phase.hpp      one combining phase: collect, the structure's hook, write-back, commit
//   dfc_recovery.hpp   RECOVER's steps and what recovered(tid) reports
//   dfc_state.hpp      the engine's volatile state (locks, bitmap, scratch)
//   dfc_validation.hpp every word open() and recover() read, checked before any write
//   dfc_node_store.hpp, dfc_node_pool.hpp  the nodes: the region's, then chunks in a heap
//   dfc_layout.hpp, dfc_types.hpp, dfc_tid_claims.hpp  layout, vocabulary, thread ids
//   stats.hpp          stats() and the Trace hooks: the vocabulary shared with pfc and fpfc
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
// Differences from the papers (each one a DFC defect or hazard, docs/references.md; each is
// argued again where it is implemented: the response, seq and announcement in
// dfc_announce.hpp and dfc_recovery.hpp, waiting in dfc_announce.hpp, frees, the roots' line,
// empty phases and dirty lines in dfc_phase.hpp, cEpoch's write-back and validation in
// dfc_recovery.hpp, the sticky combiner in sticky_combiner.hpp):
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

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "ferrite/combining/dfc_announce.hpp"
#include "ferrite/combining/dfc_format.hpp"
#include "ferrite/combining/dfc_layout.hpp"
#include "ferrite/combining/dfc_node_pool.hpp"
#include "ferrite/combining/dfc_node_store.hpp"
#include "ferrite/combining/dfc_phase.hpp"
#include "ferrite/combining/dfc_recovery.hpp"
#include "ferrite/combining/dfc_state.hpp"
#include "ferrite/combining/sticky_combiner.hpp"
#include "ferrite/combining/dfc_tid_claims.hpp"
#include "ferrite/combining/dfc_types.hpp"
#include "ferrite/combining/dfc_validation.hpp"
#include "ferrite/combining/stats.hpp"
#include "ferrite/error.hpp"
#include "ferrite/sync/wait_policy.hpp"

namespace ferrite::combining {

template <class S, class WaitPolicy = sync::spin_then_futex<>, combining_trace<dfc_op, dfc_response> Trace = no_trace>
class dfc {
    static_assert(S::root_count >= 1 && S::root_count <= dfc_max_roots,
                  "a DFC structure has between 1 and 8 root words");
    using volatile_state = dfc_volatile_state<WaitPolicy, Trace>;

public:
    // The view of one combining phase given to the structure's combine() (dfc_phase.hpp).
    using phase = dfc_phase<S, volatile_state>;

    // ---- constructors ----------------------------------------------------------------
    // Bytes a region needs for `threads` threads and `capacity` nodes.
    static constexpr std::size_t required_bytes(unsigned threads, std::uint64_t capacity) noexcept {
        return dfc_region::bytes(threads, capacity);
    }
    // Format `bytes` bytes at `region` (64-byte aligned, zero-filled or not) for `threads`
    // threads, with as many nodes as fit (dfc_format.hpp). Throws usage_error if nothing fits.
    static dfc create(void* region, std::size_t bytes, unsigned threads, dfc_options o = {}, Trace tr = {}) {
        const auto f = dfc_format(region, bytes, threads, S::root_count, o);
        dfc d(f.region, f.chunks, o, std::move(tr));
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
    // once it is durable (dfc_announce.hpp). The first call claims tid for the calling
    // thread until it exits or calls release(tid). Throws usage_error, changing nothing, if
    // tid is not one of the structure's thread ids or another live thread holds it.
    dfc_response apply(unsigned tid, std::uint64_t name, std::uint64_t param) {
        check_tid(tid);
        const auto before = pmem::thread_counters();
        pmem::counters in_pass{};  // what this thread's own phase issued, if it combined
        if (claims_) [[likely]]
            claims_->claim(tid);
        auto& a = dfc_announce::write(r_.threads[tid], r_.epoch->epoch, name, param);
        const auto done = [&] { return dfc_announce::durable(a, r_.epoch->epoch); };
        if constexpr (WaitPolicy::sticky) {
            if (const auto last = v_->last_combiner.load(std::memory_order_relaxed); last != tid && last != no_combiner)
                sticky_combiner::defer_to_last_combiner(v_->lock, v_->deferral, done);
        }
        if (v_->lock.wait_for(done)) {
            // Holding the lock: a non-BOTTOM status was answered by a finished phase.
            if (dfc_announce::unanswered(a)) {
                in_pass = phase::run(r_, *v_);
                v_->last_combiner.store(tid, std::memory_order_relaxed);
            }
            v_->lock.unlock();
        }
        v_->stats.after_operation(pmem::thread_counters() - before, in_pass);
        return dfc_announce::response(a);
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
        return dfc_announce::next_seq(r_.threads[tid]);
    }

    // ---- recovery --------------------------------------------------------------------
    // Finish the crashed phase (if any), rebuild the node bitmap, execute every durably
    // announced operation (dfc_recovery.hpp). open() calls it; later calls return at once
    // (any number of threads may call it: the first does the work, the others wait, the
    // papers' rLock). Restartable after a crash inside it. Validates the epoch, the roots,
    // every record and every link before its first write (damaged_pool, nothing written:
    // dfc_validation.hpp).
    void recover() {
        require_open();
        std::lock_guard guard(v_->recovery);
        if (v_->recovered) return;
        const std::uint64_t c = dfc_validation::epoch(r_, S::kind_name);  // rounded up
        dfc_validation::roots(r_, v_->nodes, S::root_count, S::kind_name);
        dfc_validation::records(r_, c, S::op_names, S::kind_name);
        const std::uint64_t* roots = dfc_recovery::collect_garbage<S>(r_, v_->nodes, c, v_->work_roots);  // validates the links
        if (v_->nodes.releasing_last() && v_->nodes.chunk_in_use(v_->nodes.chunks() - 1))
            dfc_validation::damaged(S::kind_name, "node chunk " + std::to_string(v_->nodes.chunks() - 1) +
                                                      " is being given back to the heap but holds reachable nodes");
        // Everything checked: the writes start here.
        if (r_.epoch->epoch.load(std::memory_order_relaxed) != c) {
            // The phase c-2 committed (c-1 was persisted after its pfence). No write-back:
            // see dfc_recovery.hpp (every later recovery rounds the same way; a commit writes
            // the line back itself).
            r_.epoch->epoch.store(c, std::memory_order_relaxed);
        }
        v_->nodes.recover_chunks();
        S::repair(roots, [&](std::uint64_t n) -> dfc_node& { return v_->nodes.node(n); });
        dfc_recovery::rearm(r_, c);
        v_->lock.lock();
        (void)phase::run(r_, *v_);
        v_->nodes.release_empty_chunks([&](unsigned k) {  // a structure that grew and emptied gives the memory back
            for (unsigned copy = 0; copy < 2; ++copy)
                for (unsigned i = 0; i < S::root_count; ++i)
                    if ((r_.roots[copy].node[i].load(std::memory_order_relaxed) >> dfc_index_bits) == k) return true;
            return false;
        });
        v_->lock.unlock();
        v_->recovered = true;
    }

    // What thread `tid` needs to know about its latest operation (call after recover()):
    // the one in the slot with the highest seq. Recovery executed it if it was not yet, so
    // it took effect; an announcement whose seq never became durable is not reported (the
    // caller who noted that seq sees a smaller one and knows it never took effect).
    dfc_recovered_op recovered(unsigned tid) const {
        check_tid(tid);
        return dfc_recovery::report(r_.threads[tid]);
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
    // Phases, operations and persistence instructions since create/open, recovery's phase
    // included (the record every combining engine reports: stats.hpp).
    combining_stats stats() const noexcept { return v_->stats.snapshot(); }
    // The sticky combiner (sticky_combiner.hpp): a thread that did not run the last phase leaves
    // a free lock alone for between min_deferral and max_deferral observations; the current
    // budget is deferral_budget() (for tests).
    static constexpr unsigned min_deferral = sticky_combiner::min_deferral;
    static constexpr unsigned max_deferral = sticky_combiner::max_deferral;
    static constexpr unsigned no_combiner = sticky_combiner::no_combiner;  // no thread has run a phase since open
    unsigned deferral_budget() const noexcept { return v_->deferral.load(std::memory_order_relaxed); }
    const dfc_options& options() const noexcept { return v_->options; }
    Trace& trace() noexcept { return v_->trace; }

private:
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

    dfc_region r_;
    std::unique_ptr<volatile_state> v_;
    std::shared_ptr<dfc_tid_claims> claims_;  // volatile; shared with the threads' exit lists;
                                              // null: dfc_options::tid_claims off
};

}  // namespace ferrite::combining
