// ferrite/containers/dpfc_layout.hpp: the on-media layout of the detectable PFC structures
// (dpfc_stack.hpp: dpfc_stack, dpfc_queue), their validation and their recovery, none of
// which needs the element type.
//
// A region (64-byte aligned, e.g. a pool root or a heap block) holds, line by line:
//
//   line 0        identity: magic, thread ids, capacity (elements), element size   (create)
//   lines 1, 2    state records: epoch, head, size, redo and served counts,
//                 4 redo values                                                    (pass commit)
//   lines 3..     one result record per thread id: epoch, seq, name, param,
//                 response {status, value}                                         (pass commit)
//   then          the elements, 8 bytes each, in a ring: element k (0 = the stack's bottom,
//                 the queue's front) at (head + k) mod capacity; a stack's head stays 0
//
// State records are the vector's (vector_layout.hpp): a pass writes the record that does NOT
// hold the larger epoch, its epoch stored last, so an epoch on the media names a complete
// record. A pass that served operation `seq` of thread t
// writes t's result record {seq, name, param, response} and, stored last in that line, the
// pass's epoch: a result record on the media is whole if its epoch is. Its operation took
// effect iff its epoch is non-zero and at most the state's epoch (the pass committed). The
// newest record is the state unless its pass did not commit, which the media shows by fewer
// than `served` results stamped with its epoch and none with the next (committed_index);
// `voided` set is an operation that recovery found uncommitted (it did not take effect;
// dpfc_recover marks it before any later pass, and passes use epochs beyond it).
//
// Validation (dpfc_validate; open and recovery run it first, writing nothing when it
// throws damaged_pool of kind damaged_object, region "dpfc_stack" or "dpfc_queue"): magic
// (a DFC or another structure's region, or the other kind, is refused), thread ids in [1, dpfc_max_threads], element size 8,
// capacity >= 1 and the region big enough for the header, results and elements (overflow
// checked); the state records' epochs differ, the larger is below 2^63 and its served count
// at most the thread ids; no result's epoch is beyond it + 1; in the committed record size
// <= capacity, head < capacity (0 for a stack) and redo <= min(size, 4); every result record with a non-zero epoch has seq >= 1,
// a known operation name, a response status its operation can give (push: ack or full; pop:
// value or empty); one with seq 0 has every other word 0 too.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "ferrite/combining/dfc_layout.hpp"
#include "ferrite/combining/dfc_types.hpp"
#include "ferrite/error.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace ferrite::containers {

inline constexpr std::uint64_t dpfc_stack_magic = 0x3153'4346'5044'7246ull;  // "FrDPFCS1"
inline constexpr std::uint64_t dpfc_queue_magic = 0x3151'4346'5044'7246ull;  // "FrDPFCQ1"
inline constexpr std::uint64_t dpfc_max_threads = 1u << 16;
inline constexpr std::uint64_t dpfc_redo_room = 4;
inline constexpr std::uint64_t dpfc_epoch_limit = std::uint64_t{1} << 63;
inline constexpr std::uint64_t dpfc_push_op = 1, dpfc_pop_op = 2;  // odd: a push (as DFC's)

struct alignas(64) dpfc_header {
    std::uint64_t magic;
    std::uint64_t threads;
    std::uint64_t capacity;      // elements
    std::uint64_t element_size;  // 8: elements are words
    std::uint64_t reserved[4];
};

struct alignas(64) dpfc_state {
    std::uint64_t epoch FERRITE_FLOW_SENTINEL;  // stored last; the record with the larger epoch is the state
    std::uint64_t head;   // ring slot of element 0 (a stack's: 0)
    std::uint64_t size;
    std::uint32_t redo;    // redo values in use: the elements at [size - redo, size)
    std::uint32_t served;  // result records the pass stamped with its epoch
    std::uint64_t redo_values[dpfc_redo_room];
};

struct alignas(64) dpfc_result {
    std::uint64_t epoch;  // stored last: the pass that served the operation (0: not taken)
    std::uint64_t seq;    // the thread's operation number, from 1
    std::uint64_t name;
    std::uint64_t param;
    combining::dfc_response response;
    std::uint64_t voided;  // 1: recovery found the pass stamped here uncommitted (stored before the epoch by passes: 0)
    std::uint64_t reserved;
};
static_assert(sizeof(dpfc_header) == 64 && sizeof(dpfc_state) == 64 && sizeof(dpfc_result) == 64);

// The region's parts, at fixed offsets from its start.
struct dpfc_region {
    dpfc_header* header;
    dpfc_state* state;  // [2]
    dpfc_result* results;
    std::uint64_t* elements;

    static constexpr std::size_t results_offset = 3 * 64;
    static constexpr std::size_t elements_offset(std::uint64_t threads) noexcept { return results_offset + threads * 64; }
    static dpfc_region at(void* region, std::uint64_t threads) noexcept {
        auto* b = static_cast<std::byte*>(region);
        return {reinterpret_cast<dpfc_header*>(b), reinterpret_cast<dpfc_state*>(b + 64),
                reinterpret_cast<dpfc_result*>(b + results_offset), reinterpret_cast<std::uint64_t*>(b + elements_offset(threads))};
    }
    // The record with the larger epoch: the state while the structure runs (recovery leaves
    // it so); after a crash, committed_index() decides.
    std::uint64_t newest() const noexcept { return state[1].epoch > state[0].epoch ? 1 : 0; }
    // After a crash: the newest record is the state if its pass's pfence completed, which
    // the media shows as: a result record stamped with the next epoch (the next pass starts
    // after that pfence), or all `served` result records stamped with its own. Else its
    // pass did not commit and the other record (committed before that pass began) is the
    // state. O(threads); validated records only.
    std::uint64_t committed_index() const noexcept {
        const auto n = newest();
        const auto epoch = state[n].epoch;
        std::uint64_t stamped = 0;
        for (std::uint64_t t = 0; t < header->threads; ++t) {
            if (results[t].epoch == epoch + 1) return n;
            stamped += results[t].epoch == epoch;
        }
        return stamped == state[n].served ? n : 1 - n;
    }
    const dpfc_state& committed() const noexcept { return state[committed_index()]; }
    // Element k of a state whose head is `head`.
    std::uint64_t& at(std::uint64_t head, std::uint64_t k) const noexcept { return elements[(head + k) % header->capacity]; }
    // Whether the operation of result record `e` took effect under the committed record `st`.
    static bool took_effect(const dpfc_state& st, const dpfc_result& e) noexcept {
        return e.epoch != 0 && e.voided == 0 && e.epoch <= st.epoch;
    }
};

// Bytes for `threads` thread ids and `capacity` elements (0 if that overflows).
constexpr std::size_t dpfc_required_bytes(std::uint64_t threads, std::uint64_t capacity) noexcept {
    if (threads == 0 || threads > dpfc_max_threads || capacity > (std::uint64_t{1} << 56)) return 0;
    return dpfc_region::elements_offset(threads) + capacity * 8;
}

namespace dpfc_detail {
inline const char* kind_name(std::uint64_t magic) noexcept { return magic == dpfc_queue_magic ? "dpfc_queue" : "dpfc_stack"; }
[[noreturn]] inline void fail(std::uint64_t magic, const std::string& what) {
    throw_damaged(pool_errc::damaged_object, kind_name(magic), "", what + "; restore the pool from a copy");
}
inline std::string word(const char* name, std::uint64_t v) {
    std::string s(name);
    s.append(" = ").append(std::to_string(v));
    return s;
}
}  // namespace dpfc_detail

// Read-only: the region of `bytes` bytes at `region`, every word recovery and the operations
// use checked (see above), for the kind `magic` names (dpfc_stack_magic or
// dpfc_queue_magic). Throws damaged_pool naming the first bad word, usage_error for a
// misaligned region.
inline void dpfc_validate(const void* region, std::size_t bytes, std::uint64_t magic) {
    const auto fail = [magic](const std::string& what) { dpfc_detail::fail(magic, what); };
    using dpfc_detail::word;
    const std::string kind = dpfc_detail::kind_name(magic);
    if (reinterpret_cast<std::uintptr_t>(region) % 64 != 0)
        throw usage_error(kind + ": the region must be 64-byte aligned (e.g. a pool root)");
    if (bytes < dpfc_region::results_offset) fail(word("region bytes", bytes) + " cannot hold a header");
    const auto* h = static_cast<const dpfc_header*>(region);
    if (h->magic != magic) fail(word("magic", h->magic) + " is not a " + kind + "'s (format 1)");
    if (h->threads == 0 || h->threads > dpfc_max_threads) fail(word("threads", h->threads) + " is not in [1, 65536]");
    if (h->element_size != 8) fail(word("element_size", h->element_size) + " is not 8");
    const auto need = dpfc_required_bytes(h->threads, h->capacity);
    if (h->capacity == 0 || need == 0 || need > bytes)
        fail(word("capacity", h->capacity) + " does not fit the " + std::to_string(bytes) + "-byte region");
    const auto r = dpfc_region::at(const_cast<void*>(region), h->threads);
    if (r.state[0].epoch == r.state[1].epoch)
        fail(word("state[1].epoch", r.state[1].epoch) + " equals state[0].epoch (no pass writes two records with one epoch)");
    const auto newest = r.state[r.newest()].epoch;
    if (newest >= dpfc_epoch_limit) fail(word("state epoch", newest) + " is 2^63 or more");
    for (std::uint64_t t = 0; t < h->threads; ++t)  // before committed() counts them
        if (r.results[t].epoch > newest + 1)
            fail("result[" + std::to_string(t) + "]." + word("epoch", r.results[t].epoch) +
                 " is beyond the newest state epoch " + std::to_string(newest) + " + 1");
    if (r.state[r.newest()].served > h->threads)
        fail(word("state served", r.state[r.newest()].served) + " exceeds the thread ids");
    const auto& st = r.committed();
    if (st.size > h->capacity) fail(word("state size", st.size) + " exceeds the capacity " + std::to_string(h->capacity));
    if (st.head >= h->capacity || (magic == dpfc_stack_magic && st.head != 0))
        fail(word("state head", st.head) + (magic == dpfc_stack_magic ? " is not 0 (a stack's)" : " is not below the capacity"));
    if (st.redo > std::min(st.size, dpfc_redo_room))
        fail(word("state redo", st.redo) + " exceeds the size or the record's room of 4");
    for (std::uint64_t t = 0; t < h->threads; ++t) {
        const auto& e = r.results[t];
        std::string who = "result[";
        who.append(std::to_string(t)).append("].");
        if (e.epoch == 0 && e.seq == 0) {
            if (e.name != 0 || e.param != 0 || e.response.status != combining::dfc_status::none || e.response.value != 0 ||
                e.voided != 0)
                fail(who + "seq = 0 with other words set (no operation leaves that)");
            continue;
        }
        if (e.voided > 1 || (e.voided == 1 && e.epoch == 0)) fail(who + word("voided", e.voided) + " is not 0, or 1 over an epoch");
        if (e.seq == 0) fail(who + word("epoch", e.epoch) + " with seq 0");
        using s = combining::dfc_status;
        const auto status = e.response.status;
        if (e.name == dpfc_push_op) {
            if (e.epoch != 0 && status != s::ack && status != s::full)
                fail(who + word("response.status", static_cast<std::uint64_t>(status)) + " is no push's response");
        } else if (e.name == dpfc_pop_op) {
            if (e.epoch != 0 && status != s::value && status != s::empty)
                fail(who + word("response.status", static_cast<std::uint64_t>(status)) + " is no pop's response");
        } else {
            fail(who + word("name", e.name) + " is no dpfc_stack operation");
        }
    }
}

// The commit of a pass (and of recovery): the state record that is not the state (slot
// 1 - current) gets {head, size, redo, served}, then, in the same line
// and stored last, epoch; pwb; pfence (PP). The caller has queued the write-backs (result
// records, element lines) it orders.
FERRITE_FLOW_ROOT inline void dpfc_commit(dpfc_region r, std::uint64_t current, std::uint64_t epoch, std::uint64_t head,
                        std::uint64_t size, const std::uint64_t* redo, std::uint64_t redo_count,
                        std::uint64_t served) noexcept {
    auto& next = r.state[1 - current];
    next.head = head;
    next.size = size;
    next.redo = static_cast<std::uint32_t>(redo_count);
    next.served = static_cast<std::uint32_t>(served);
    if (redo_count > 0) std::memcpy(next.redo_values, redo, redo_count * 8);
    std::atomic_signal_fence(std::memory_order_release);  // the epoch persists no earlier than the record
    next.epoch = epoch;
    pmem::pwb(&next);
    pmem::pfence();  // PP: the pass (or the recovery) is durable
}

// Recovery, after dpfc_validate. With C the committed record (committed_index), the orphans
// are the results stamped after C (by the pass after C, which did not commit) and not yet
// voided. If there are any, or C is not the newest record, or C holds redo values:
//   1. C's redo values go into the elements, and each orphan gets voided = 1 (its epoch
//      stays: it is the evidence committed_index reads; seq, name and param stay for
//      recover(tid)); pwb of each; pfence: all durable before a record that no longer
//      carries the redo and under which an unvoided orphan would look taken;
//   2. a record {C's head and size, no redo, served 0} with the fresh epoch C + 2 (beyond every
//      stamp) goes into the other slot (dpfc_commit, its pfence). If that slot holds the
//      newest record (its pass did not commit), its epoch is first set to 0 in the same
//      line: stores to one line persist in order, so a torn write leaves epoch 0 (never
//      chosen) or the whole new record, never the old epoch over new words (served 0 and
//      no stamp would make an uncommitted record look committed). The new record is
//      committed by construction: no stamp C + 2 or C + 3 exists.
// Idempotent: a crash before step 2's epoch persisted leaves C committed with its evidence
// intact (run again); after it, nothing is left to do. Nothing is written when nothing is
// to do.
FERRITE_FLOW_ROOT inline void dpfc_recover(void* region) noexcept {
    const auto* h = static_cast<const dpfc_header*>(region);
    const auto r = dpfc_region::at(region, h->threads);
    const auto cur = r.committed_index();
    const auto st = r.state[cur];
    const auto orphan = [&](const dpfc_result& e) { return e.epoch > st.epoch && e.voided == 0; };
    bool orphans = false;
    for (std::uint64_t t = 0; t < h->threads; ++t) orphans = orphans || orphan(r.results[t]);
    if (!orphans && cur == r.newest() && st.redo == 0) return;
    for (std::uint64_t i = 0; i < st.redo; ++i) {
        auto& slot = r.at(st.head, st.size - st.redo + i);
        slot = st.redo_values[i];
        pmem::pwb(&slot);
    }
    for (std::uint64_t t = 0; t < h->threads; ++t) {
        auto& e = r.results[t];
        if (!orphan(e)) continue;
        e.voided = 1;  // not taken
        pmem::pwb(&e);
    }
    pmem::pfence();  // PP: elements and voided orphans are durable before the record below
    if (cur != r.newest()) r.state[1 - cur].epoch = 0;  // same line as the commit below, stored first
    std::atomic_signal_fence(std::memory_order_release);
    dpfc_commit(r, cur, st.epoch + 2, st.head, st.size, nullptr, 0, 0);
}

// What recover(tid) reports: thread `tid`'s latest operation on the media.
inline combining::dfc_recovered_op dpfc_recovered(const void* region, unsigned tid) noexcept {
    const auto* h = static_cast<const dpfc_header*>(region);
    const auto r = dpfc_region::at(const_cast<void*>(region), h->threads);
    const auto& e = r.results[tid];
    combining::dfc_recovered_op out;
    out.seq = e.seq;
    out.name = e.name;
    out.param = e.param;
    out.took_effect = dpfc_region::took_effect(r.committed(), e);
    if (out.took_effect) out.response = e.response;
    return out;
}

}  // namespace ferrite::containers
