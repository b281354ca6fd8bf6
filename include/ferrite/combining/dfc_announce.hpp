// ferrite/combining/dfc_announce.hpp: the announcing thread's side of DFC (OP, alg. 1-18 of
// [DFC] in docs/references.md): write an operation into the thread's record, make it
// collectable, and tell when its response is durable.
//
// Algorithm. A thread record holds two announcement slots and a word `valid` (bit 0: the
// active slot; bit 1, dfc_ready_bit: "ready to be collected", the papers' MSB). An operation
// writes the inactive slot {status := BOTTOM, value, epoch (cEpoch rounded up to even),
// param, name, seq := the active slot's seq + 1}, seq last, then valid := slot | ready
// (release). Its response is durable once the status is not BOTTOM *and* cEpoch reached the
// collecting epoch (stamped into the slot by the combiner) + 2.
//
// Differences from the papers (DFC defects and hazards, docs/references.md):
//   * No write-back and no fence: the papers pay two pwb and two pfence per operation (one
//     for the slot, one for `valid`). `valid` is volatile here; after a crash the active
//     slot is the one with the higher durable seq (dfc_recovery.hpp), and seq is the slot's
//     last store, so a durable seq means a durable slot (axiom 1: one line). The combiner
//     that collects the slot writes its line back before its phase commits (the response
//     shares the line, dfc_phase.hpp).
//   * seq (defect #10) tells "my last operation" from "the one before" after a crash.
//   * Waiting for the *collecting* epoch + 2, read from the slot behind the status, instead
//     of the papers' opEpoch + 2 with opEpoch read before announcing: a late arrival
//     collected by the next phase could otherwise see its response while that phase is not
//     yet durable and return too early (the crash campaigns find it at ~40% of crash points
//     with the papers' rule). The papers' late-arrival retry (alg. 44-50) is subsumed.
//
// Crash consistency: an operation whose seq reached the media is executed exactly once (by
// its phase, or re-armed and executed by recovery); one whose seq did not was never
// committed, and recovered() reports the seq before it (dfc_recovery.hpp).
#pragma once

#include <atomic>
#include <cstdint>

#include "ferrite/combining/dfc_layout.hpp"

namespace ferrite::combining {

struct dfc_announce {
    // The seq the next operation of the thread owning `rec` will carry.
    static std::uint64_t next_seq(const dfc_thread_record& rec) noexcept {
        return rec.ann[rec.valid.load(std::memory_order_relaxed) & 1].seq.load(std::memory_order_relaxed) + 1;
    }

    // Announce {name, param} in the inactive slot of `rec` and make it collectable; `epoch`
    // is the region's cEpoch. Returns the slot, where the response will appear.
    static dfc_announcement& write(dfc_thread_record& rec, const std::atomic<std::uint64_t>& epoch, std::uint64_t name,
                                   std::uint64_t param) noexcept {
        const std::uint64_t v = rec.valid.load(std::memory_order_relaxed);
        const unsigned slot = 1 - static_cast<unsigned>(v & 1);
        auto& a = rec.ann[slot];
        const std::uint64_t seq = rec.ann[v & 1].seq.load(std::memory_order_relaxed) + 1;
        std::uint64_t e = epoch.load(std::memory_order_acquire);
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
        return a;
    }

    // No response yet (status BOTTOM): not collected, or collected and not yet answered.
    static bool unanswered(const dfc_announcement& a) noexcept {
        return a.status.load(std::memory_order_acquire) == static_cast<std::uint64_t>(dfc_status::bottom);
    }

    // The response in `a` is durable: answered, and cEpoch moved two past the collecting
    // phase (c + 2 is stored only after c + 1 persisted).
    static bool durable(const dfc_announcement& a, const std::atomic<std::uint64_t>& epoch) noexcept {
        if (unanswered(a)) return false;
        return epoch.load(std::memory_order_acquire) >= a.epoch.load(std::memory_order_relaxed) + 2;
    }

    static dfc_response response(const dfc_announcement& a) noexcept {
        return {static_cast<dfc_status>(a.status.load(std::memory_order_acquire)), a.value.load(std::memory_order_relaxed)};
    }
};

}  // namespace ferrite::combining
