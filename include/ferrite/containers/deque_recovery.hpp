// ferrite/containers/deque_recovery.hpp: validation and recovery of a persistent deque from
// its header alone, without its element type, and the end of a ring replacement, which
// growth and recovery share.
//
// Nothing in a deque's recovery depends on the element type (the ring is replaced whole,
// never patched), so a pool's catalog can recover every deque it names without knowing the
// program's types, as vector_recovery.hpp does for vectors. The steps and their crash
// argument are in persistent_deque_core.hpp.
//
// Validation (validate_deque; open and recovery run it first, the catalog and `ferrite pool
// check` call it on their own, over a pool and heap that may be read-only), as for vectors
// (vector_recovery.hpp): every word that is used as a size, an offset or a pointer is put in
// its domain before it is used, a damaged header throws damaged_pool (damaged_object, region
// "deque") naming the word and its value, and nothing has been written (recovery validates
// everything, including the heap states its confirm calls need, before its first store).
// Checked, in this order:
//   identity: the anchor a 64-byte aligned offset with the header inside the pool; magic
//     (the format version is its last byte: a format-1 deque or queue is refused with
//     pool_error wrong_version, not as damage); element size in [1, pool size], and as the
//     caller's type asks when it names one;
//   the header's block: a heap block the deque keeps (live, or allocation pending: create()
//     confirms after the anchor) holding the header;
//   log_tag one of nop / replace;
//   the ring: capacity 0 or a power of two (the slot mapping masks with capacity - 1); data
//     = 0 exactly when capacity = 0; otherwise a heap block other than the header's, kept
//     (or, under an uninstalled REPLACE, live or deallocation pending: the old ring), whose
//     usable bytes hold capacity x element size (overflow checked) inside the pool;
//   the state records: their epochs differ, and the larger one (it names the state) is
//     below 2^63, so the next pass's epoch cannot wrap; in that record size <= capacity
//     (head is a free-running counter: every value is valid) and redo_front + redo_back <=
//     min(size, deque_redo_room) (the other record is never read: a pass may have left it
//     torn);
//   REPLACE (tag = replace): replace_capacity a power of two >= capacity (so >= size),
//     replace_data a kept heap block other than the header's that holds it; if not yet
//     installed, the pair of states a growth leaves (old live with new allocation pending,
//     or old deallocation pending with new live). With data equal to replace_data the
//     capacity may be the old one, even 0 (a crash persisted the first store of the install).
// A stale REPLACE target under tag nop is never read, so not checked. What one header cannot
// show: a block another object names too; deque_owned_blocks() lists the blocks for the
// catalog to prove them disjoint.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "ferrite/containers/deque_layout.hpp"
#include "ferrite/containers/media_checks.hpp"
#include "ferrite/error.hpp"
#include "ferrite/pmem/pool.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace ferrite::containers {

// The header at pool offset `anchor`, its identity checked (in the pool, magic): the other
// words are not; validate_deque() checks them. Throws error for anchor 0 (no deque there),
// damaged_pool for the rest.
inline deque_header* deque_header_at(const pmem::pool_ref& pool, std::uint64_t anchor) {
    auto* h = header_in_pool<deque_header>(pool, "deque", anchor);
    if (h->magic == deque_magic_v1) {
        std::string what = "deque: header at pool offset ";
        what.append(std::to_string(anchor))
            .append(" of '")
            .append(pool.path().string())
            .append("' is a ferrite deque or queue of format 1 (one epoch word, two fences per push pass); this build "
                    "reads format 2 (two state records, one fence per pass) and does not convert it: read the "
                    "elements with the ferrite release that wrote the pool and push them into a new deque or queue");
        throw pool_error(pool_errc::wrong_version, what);
    }
    if (h->magic != deque_magic)
        header_check(pool, "deque", anchor)
            .fail("magic", h->magic, "is not a ferrite deque's or queue's (format 2)",
                  "check the anchor; if it is right, restore the pool from a copy");
    return h;
}

// Read-only: the deque at `anchor`, every word it uses checked (see above); `element_size`
// 0 accepts any. Throws damaged_pool (damaged_object, region "deque", object "") naming the
// first bad word.
template <class Heap>
const deque_header& validate_deque(const pmem::pool_ref& pool, const Heap& heap, std::uint64_t anchor,
                                   std::uint64_t element_size = 0) {
    const deque_header& h = *deque_header_at(pool, anchor);
    const header_check c(pool, "deque", anchor);
    const auto esz = h.element_size;
    if (esz == 0 || esz > pool.size()) c.fail("element_size", esz, "is no element size in this pool");
    if (element_size != 0 && esz != element_size)
        c.fail("element_size", esz, "is not the size of the element type asked for (" + std::to_string(element_size) + ")",
               "open it with the element type that created it; if that is the type, restore the pool from a copy");
    (void)c.header_block(heap, sizeof(deque_header));

    const auto tag = h.log_tag;
    if (tag != deque_log_tag::nop && tag != deque_log_tag::replace)
        c.fail("log_tag", static_cast<std::uint64_t>(tag), "is neither nop (0) nor replace (1)");
    const bool replacing = tag == deque_log_tag::replace;
    const bool installed = replacing && h.data == h.replace_data;  // capacity may still be the old one

    const auto cap = h.capacity;
    if ((cap & (cap - 1)) != 0) c.fail("capacity", cap, "is not a power of two");
    auto old_state = alloc::block_state::live;
    if (h.data == 0) {
        if (cap != 0) c.fail("data", 0, "names no ring, but the capacity is " + std::to_string(cap));
    } else {
        if (cap == 0 && !installed) c.fail("capacity", 0, "with a ring at pool offset " + std::to_string(h.data));
        const block_states allowed = replacing && !installed
                                         ? states(alloc::block_state::live) | states(alloc::block_state::deallocation_pending)
                                         : kept_states;
        old_state = c.block(heap, "data", h.data, allowed, "capacity", cap, esz);
    }
    if (h.state[0].epoch == h.state[1].epoch)
        c.fail("state[1].epoch", h.state[1].epoch, "equals state[0].epoch (no pass writes two records with one epoch)");
    const auto cur = deque_current(h);
    const auto& st = h.state[cur];
    std::string rec = "state[";
    rec.append(std::to_string(cur)).append("]");
    if (st.epoch >= deque_epoch_limit)  // the next pass's epoch + 1 must not wrap to the other record's
        c.fail(rec + ".epoch", st.epoch, "is 2^63 or more (no deque makes that many passes)");
    if (st.size > cap) c.fail(rec + ".size", st.size, "exceeds the capacity " + std::to_string(cap));
    const std::uint64_t redo = std::uint64_t{st.redo_front} + st.redo_back;
    if (redo > std::min(st.size, deque_redo_room(esz)))
        c.fail(rec + ".redo_front + redo_back", redo,
               "exceeds the size " + std::to_string(st.size) + " or the record's room of " +
                   std::to_string(deque_redo_room(esz)) + " elements");

    if (replacing) {
        const auto rcap = h.replace_capacity;
        if (rcap == 0 || (rcap & (rcap - 1)) != 0 || rcap < cap)
            c.fail("replace_capacity", rcap,
                   "is not a power of two at least the capacity " + std::to_string(cap) + " (a growth only grows)");
        const auto fresh = c.block(heap, "replace_data", h.replace_data, kept_states, "replace_capacity", rcap, esz);
        // The two states a growth moves through in one confirm-slot store (confirm_replacement).
        if (!installed && h.data != 0 &&
            fresh != (old_state == alloc::block_state::live ? alloc::block_state::allocation_pending
                                                            : alloc::block_state::live))
            c.fail("replace_data", h.replace_data,
                   std::string("names a block the heap has ") + alloc::to_string(fresh) + " while the ring it replaces is " +
                       alloc::to_string(old_state) + ", a pair no growth leaves");
    }
    return h;
}

// Read-only: the pool offsets of every heap block the deque at `anchor` owns (its header,
// its ring, the ring an unfinished REPLACE installs), validated first (validate_deque). No
// two objects of a pool may share one: the catalog compares these sets.
template <class Heap>
std::vector<std::uint64_t> deque_owned_blocks(const pmem::pool_ref& pool, const Heap& heap, std::uint64_t anchor) {
    const auto& h = validate_deque(pool, heap, anchor);
    std::vector<std::uint64_t> blocks{anchor};
    if (h.data != 0) blocks.push_back(h.data);
    if (h.log_tag == deque_log_tag::replace && h.replace_data != h.data) blocks.push_back(h.replace_data);
    return blocks;
}

// A committed REPLACE (tag = replace, durable): install the logged ring and let the old one
// go, the header naming the old ring until the install. Idempotent, so recovery simply runs
// it again (growth runs it once). The orders it keeps:
//   * the old ring's pending deallocation is durable before the install can reach the media
//     (the heap's confirm_replacement() ends with a pfence): after the install, nothing names
//     the old ring but the heap's confirm slot (the one that named the new ring: a heap whose
//     other slots are all taken cannot stop a growth that committed, or its recovery);
//   * the install is durable (pwb, pfence) before the tag is cleared: a cleared tag with the
//     old ring installed would have finish_recovery() free the live ring.
// The cleared tag itself needs no write-back: a REPLACE whose ring is installed is a no-op
// here, and the next growth rewrites the line (the clearing store precedes its new target in
// the same line, so the target never persists with the stale tag).
template <class Heap>
FERRITE_FLOW_ROOT void deque_finish_replace(const pmem::pool_ref& pool, Heap& heap, deque_header* h) {
    const auto old = h->data;
    const bool replaced = old == h->replace_data;
    auto* fresh = pool.base() + h->replace_data;
    if (!replaced && old != 0)
        heap.confirm_replacement(fresh, pool.base() + old);  // needs no free slot; repeatable
    else
        heap.confirm_allocation(fresh);  // no-op if already confirmed
    // The capacity is compared too: it shares the line with the data offset, and a crash may
    // have persisted the first store of the install without the second.
    if (!replaced || h->capacity != h->replace_capacity) {
        h->data = h->replace_data;
        h->capacity = h->replace_capacity;
        pmem::pwb(&h->data);
        pmem::pfence();  // PP: the new ring is installed
    }
    h->log_tag = deque_log_tag::nop;
    if (!replaced && old != 0) heap.confirm_deallocation(pool.base() + old);
}

// Calls run(dst, offset, n) for each contiguous run of `bytes` bytes at ring position `pos`
// (deque_state.head + k) and the positions after it, wrapping at the capacity: dst the run's
// first byte in the ring, offset its distance from the start of the bytes. The caller checked
// that the bytes hold whole elements and fit the capacity.
template <class Run>
inline void deque_ring_runs(const pmem::pool_ref& pool, const deque_header* h, std::uint64_t pos, std::uint64_t bytes,
                            Run&& run) noexcept {
    const auto esz = h->element_size, cap = h->capacity;
    auto* ring = pool.base() + h->data;
    for (std::uint64_t done = 0; done < bytes;) {
        const auto slot = pos & (cap - 1);
        const auto n = std::min(bytes - done, (cap - slot) * esz);
        run(ring + slot * esz, done, n);
        done += n;
        pos += n / esz;
    }
}

// Store `bytes` at ring position `pos` and after, wrapping: plain stores + pwb, or NT stores.
// No fence: the caller's orders them.
inline void deque_store_ring(const pmem::pool_ref& pool, const deque_header* h, std::uint64_t pos,
                             const std::byte* src, std::uint64_t bytes, bool nt) noexcept {
    deque_ring_runs(pool, h, pos, bytes, [&](std::byte* dst, std::uint64_t offset, std::uint64_t n) {
        if (nt) {
            pmem::nt_memcpy(dst, src + offset, n);
        } else {
            std::memcpy(dst, src + offset, n);
            pmem::pwb_range(dst, n);
        }
    });
}

// pwb the lines of `bytes` at ring position `pos` and after, wrapping: the write-back of the
// deferred values (adjacent values share a line: one pwb per line, not per value). No fence.
// `where` is the caller's site: flush mutation testing switches each use off on its own.
inline void deque_pwb_ring(const pmem::pool_ref& pool, const deque_header* h, std::uint64_t pos, std::uint64_t bytes,
                           const pmem::site& where = pmem::site::current()) noexcept {
    deque_ring_runs(pool, h, pos, bytes,
                    [&](std::byte* dst, std::uint64_t, std::uint64_t n) { pmem::pwb_range(dst, n, where); });
}

// The commit of a pass, and of recovery's replay: write the state record that is not the
// state, {head, size, redo counts, `redo` (kept_front + kept_back elements, front ones in
// deque order, then back ones)}, then, in the same line and stored last, the next epoch;
// pwb; pfence (PP: the record is the state). The caller has queued the write-backs it orders.
inline void deque_commit(deque_header* h, std::uint64_t head, std::uint64_t size, std::uint64_t kept_front,
                         std::uint64_t kept_back, const std::byte* redo) noexcept {
    const auto cur = deque_current(*h);
    auto& next = h->state[1 - cur];
    next.head = head;
    next.size = size;
    next.redo_front = static_cast<std::uint32_t>(kept_front);
    next.redo_back = static_cast<std::uint32_t>(kept_back);
    const auto bytes = (kept_front + kept_back) * h->element_size;  // <= deque_redo_bytes
    if (bytes % 8 == 0) {  // 8-byte words, inline: a pass's commit calls no library memcpy
        for (std::uint64_t i = 0; i < bytes; i += 8) std::memcpy(next.redo_values + i, redo + i, 8);
    } else if (bytes > 0) {
        std::memcpy(next.redo_values, redo, bytes);
    }
    // Stored after the rest of the line: the epoch persists no earlier than the record.
    std::atomic_signal_fence(std::memory_order_release);
    next.epoch = h->state[cur].epoch + 1;  // commit point once durable
    pmem::pwb(&next);
    pmem::pfence();  // PP: the record is the state
}

// Recovery: copy the committed state record's redo values into their ring slots (validated:
// redo_front + redo_back <= size <= capacity), pfence, then commit a record of the same
// state without redo (deque_commit). The pass that wrote the record may have crashed before
// its values reached the ring; if it did not, the copy rewrites equal bytes. The values are
// durable before the record that no longer carries them: a crash in between finds the old
// record and replays again. After that the ring alone holds them, as after a pass that did
// not crash (the next pass, maybe on another thread whose fence would not order this
// thread's stores, finds nothing to repeat).
FERRITE_FLOW_ROOT inline void deque_replay_redo(const pmem::pool_ref& pool, deque_header* h) noexcept {
    const auto st = deque_committed(*h);
    if (st.redo_front + st.redo_back == 0) return;
    const auto esz = h->element_size;
    deque_store_ring(pool, h, st.head, st.redo_values, st.redo_front * esz, true);
    deque_store_ring(pool, h, st.head + st.size - st.redo_back, st.redo_values + st.redo_front * esz,
                     st.redo_back * esz, true);
    pmem::pfence();  // PP: the redo values are in the ring before a record without them
    deque_commit(h, st.head, st.size, 0, 0, nullptr);
}

// Between the heap's recover() and finish_recovery() (see persistent_deque_core.hpp).
// Validates the whole header (validate_deque) before its first store.
template <class Heap>
void recover_deque(const pmem::pool_ref& pool, Heap& heap, std::uint64_t anchor) {
    (void)validate_deque(pool, heap, anchor);
    auto* h = deque_header_at(pool, anchor);
    heap.confirm_allocation(h);  // create() may have crashed before confirming its blocks
    if (h->log_tag == deque_log_tag::replace)
        deque_finish_replace(pool, heap, h);
    else if (h->data != 0)
        heap.confirm_allocation(pool.base() + h->data);
    deque_replay_redo(pool, h);  // into the ring now installed
}

}  // namespace ferrite::containers
