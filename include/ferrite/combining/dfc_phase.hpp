// ferrite/combining/dfc_phase.hpp: one DFC combining phase (alg. 51-85 with REDUCE's
// collection, alg. 86-113, of [DFC] in docs/references.md), run by the holder of the
// combiner lock, and the view of it (dfc_phase) that the structure's combine() gets.
//
// Algorithm. At cEpoch = c (even): COLLECT every ready slot whose status is BOTTOM, stamping
// ann.epoch := c; let the structure eliminate and apply the batch on a working copy of the
// roots (S::combine: it answers each operation through respond(), in linearization order,
// and reports the nodes it wrote and freed); write the working roots into the *inactive*
// root copy; pwb every collected announcement and every line of a node written; ONE pfence;
// cEpoch := c+1, pwb, pfence (PP); cEpoch := c+2 (never written back; releases the
// waiters); only then give the freed nodes back to the bitmap. The active roots are
// roots[(cEpoch/2) % 2].
//
// Differences from the papers (DFC defects and hazards, docs/references.md):
//   * Defect #1: COLLECT reads every thread's `valid` (tAnn[i]), not its own.
//   * Defect #9, for every structure: frees reach the bitmap only after the commit, so no
//     node of the committed version is reused inside the phase that unlinks it.
//   * The two root copies share cEpoch's cache line (dfc_layout.hpp): the commit's
//     write-back of cEpoch persists the new roots with it (axiom 1), one pwb per phase fewer
//     than the papers' k + p + 2 (k announcements, p new nodes).
//   * A phase that collects nothing does not commit (no write-back, no fence, no epoch).
//   * Dirty nodes are written back once per cache line (two nodes share a line).
//
// Crash consistency. LP: respond(), in the order of the calls. PP: the pfence after
// cEpoch := c+1 is written back: from then on the new root copy is active and every response
// of the phase durable (the announcements and nodes were fenced before). A crash before it
// leaves the old root copy active, untouched (the phase wrote only the inactive copy, fresh
// nodes and, for the queue and deque, links no committed version reads: DFC defect #8);
// recovery re-arms the operations stamped with epoch c (dfc_recovery.hpp).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "ferrite/combining/dfc_layout.hpp"
#include "ferrite/combining/dfc_types.hpp"
#include "ferrite/pmem/counters.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace ferrite::combining {

// S: the structure (combining::dfc's requirements); State: dfc_volatile_state.
template <class S, class State>
class dfc_phase {
public:
    std::span<dfc_op> ops() noexcept { return v_.ops; }
    // Scratch lists of operations for the structure (this engine's: a combine() may be
    // interrupted by a crash check that runs another engine's phase on this thread).
    std::vector<dfc_op*>& list(unsigned k) noexcept { return v_.lists[k]; }
    bool elimination() const noexcept { return v_.options.elimination; }
    std::uint64_t& root(unsigned k) noexcept { return v_.work_roots[k]; }
    dfc_node& node(std::uint64_t n) noexcept { return v_.nodes.node(n); }
    // A free node (its contents are garbage; the pool grows if it can), or 0 if the
    // pool is exhausted.
    std::uint64_t allocate() noexcept { return v_.nodes.allocate(); }
    // Node n was written and is part of the new version: write it back before the commit.
    void written(std::uint64_t n) { v_.dirty.push_back(n); }
    // Node n left the structure: reusable after this phase commits (#9).
    void free_after_commit(std::uint64_t n) { v_.freed.push_back(n); }
    // LP: the response of `op`; calls come in linearization order.
    void respond(dfc_op& op, dfc_response r) noexcept {
        auto& a = r_.threads[op.tid].ann[op.slot];
        a.value.store(r.value, std::memory_order_relaxed);
        a.status.store(static_cast<std::uint64_t>(r.status), std::memory_order_release);
        op.answered = true;
        v_.trace.applied(static_cast<const dfc_op&>(op), r);
    }

    // One combining phase on region `r` (see the header). The caller holds the combiner lock.
    // Returns the phase's persistence instructions (none if it collected nothing).
    FERRITE_FLOW_ROOT static pmem::counters run(const dfc_region& r, State& v) noexcept {
        const auto before = pmem::thread_counters();
        const std::uint64_t c = r.epoch->epoch.load(std::memory_order_relaxed);  // even
        v.ops.clear();
        const auto threads = static_cast<unsigned>(r.header->threads);
        for (unsigned t = 0; t < threads; ++t) {  // COLLECT (alg. 88-101)
            auto& rec = r.threads[t];
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
        if (v.ops.empty()) return {};
        const unsigned active = static_cast<unsigned>((c / 2) % 2);
        for (unsigned k = 0; k < S::root_count; ++k)
            v.work_roots[k] = r.roots[active].node[k].load(std::memory_order_relaxed);
        v.dirty.clear();
        v.freed.clear();
        dfc_phase ph(r, v);
        S::combine(ph);  // LP: every respond() in it
        auto& next = r.roots[1 - active];
        for (unsigned k = 0; k < S::root_count; ++k) next.node[k].store(v.work_roots[k], std::memory_order_relaxed);

        for (const auto& op : v.ops) pmem::pwb(&r.threads[op.tid].ann[op.slot]);
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
        r.epoch->epoch.store(c + 1, std::memory_order_release);
        pmem::pwb(&r.epoch->epoch);
        pmem::pfence();  // PP: the phase's commit point (the new roots are active)
        r.epoch->epoch.store(c + 2, std::memory_order_release);  // releases the waiters
        for (auto n : v.freed) v.nodes.release(n);
        v.trace.pass_done();
        const auto in_pass = pmem::thread_counters() - before;
        v.stats.on_pass(v.ops.size(), in_pass);
        return in_pass;
    }

private:
    dfc_phase(const dfc_region& r, State& v) noexcept : r_(r), v_(v) {}
    const dfc_region& r_;
    State& v_;
};

}  // namespace ferrite::combining
