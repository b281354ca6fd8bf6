// ferrite/combining/dfc_recovery.hpp: the steps of DFC's recovery (RECOVER, alg. 26-43 of
// [DFC] in docs/references.md) and what it tells each thread afterwards.
//
// Algorithm (combining::dfc::recover runs these in order, under the recovery lock, after
// dfc_validation.hpp accepted the epoch, the roots and every record): round an odd cEpoch
// up (the phase c-2 committed: c-1 was persisted after its pfence); rebuild the volatile node
// bitmap from the nodes reachable from the active roots (collect_garbage; the walk checks
// every link); let the structure repair links no committed version reads (DFC defect #8);
// for every thread take the slot with the higher durable seq as the active one, set the
// ready bit and re-arm (status := BOTTOM) an active announcement collected in the crashed
// phase (ann.epoch == cEpoch: rearm); then run one combining phase (dfc_phase.hpp).
// Afterwards every announcement whose seq was durable has a durable response, and report()
// gives each thread its latest operation.
//
// Differences from the papers (DFC defects and hazards, docs/references.md):
//   * The active slot is the one with the higher durable seq, not `valid` (which is volatile
//     here, dfc_announce.hpp); a never-used slot (op name 0) is never re-armed (defect #2).
//   * report() gives the operation with the highest durable seq (defect #10): a thread that
//     noted a newer seq before a crash knows that operation never took effect.
//   * The rounded cEpoch is not written back (the papers: alg. 30): a persisted odd value is
//     rounded up the same way by every later recovery until a phase commits, and each commit
//     writes the cEpoch line back itself. Flush mutation testing showed that write-back to be
//     redundant (no crash point can tell it is missing).
//   * Recovery trusts nothing: every word is validated before the first write
//     (dfc_validation.hpp), so a damaged region is refused with nothing written.
//
// Crash consistency: recovery is restartable. Until the phase it runs commits, it writes
// only volatile state, the rounded cEpoch (the same value any rerun computes), links no
// committed version reads, ready bits (volatile) and BOTTOM into announcements of the
// crashed phase (which a rerun re-arms again); its phase commits like any other.
#pragma once

#include <atomic>
#include <cstdint>

#include "ferrite/combining/dfc_layout.hpp"
#include "ferrite/combining/dfc_node_store.hpp"
#include "ferrite/combining/dfc_types.hpp"
#include "ferrite/combining/dfc_validation.hpp"

namespace ferrite::combining {

struct dfc_recovery {
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

    // Garbage collection: every node reachable from the active roots is in use (the volatile
    // bitmap of `store`; the walk checks every link: dfc_validation::links). Copies the
    // active root copy's words (cEpoch c, rounded) into `work_roots` and returns it.
    template <class S>
    static const std::uint64_t* collect_garbage(const dfc_region& r, dfc_node_store& store, std::uint64_t c,
                                                std::uint64_t* work_roots) {
        store.reset_all_free();
        dfc_validation::links<S>(r, store, c, [&](std::uint64_t n) {
            if (!store.is_free(n)) return false;
            store.take(n);
            return true;
        });
        for (unsigned k = 0; k < S::root_count; ++k)
            work_roots[k] = r.roots[(c / 2) % 2].node[k].load(std::memory_order_relaxed);
        return work_roots;
    }

    // Every thread's durable slot becomes its active, ready one; an announcement collected
    // by the crashed phase (epoch == c) is re-armed to run again.
    static void rearm(const dfc_region& r, std::uint64_t c) noexcept {
        const auto threads = r.header->threads;
        for (std::uint64_t t = 0; t < threads; ++t) {
            auto& rec = r.threads[t];
            const unsigned s = durable_slot(rec);
            auto& a = rec.ann[s];
            if (a.name.load(std::memory_order_relaxed) == dfc_none_op) continue;  // never used (#2)
            if (a.epoch.load(std::memory_order_relaxed) == c)  // collected by the crashed phase
                a.status.store(static_cast<std::uint64_t>(dfc_status::bottom), std::memory_order_relaxed);
            rec.valid.store(s | dfc_ready_bit, std::memory_order_relaxed);
        }
    }

    // What the thread owning `rec` needs to know about its latest operation (after
    // recovery): the one in the slot with the highest seq. Recovery executed it if it was not
    // yet, so it took effect; an announcement whose seq never became durable is not reported.
    static dfc_recovered_op report(const dfc_thread_record& rec) noexcept {
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
};

}  // namespace ferrite::combining
