// ferrite/containers/persistent_deque_core.hpp: the sequential persistent deque (a growable
// ring buffer) that a combining engine drives; ferrite::deque and ferrite::queue run on it.
//
// Algorithm: the PFC thesis's persistent vector (Stuttgart 2025, Alg 5.6-5.10) carried over to
// a double-ended ring, as its outlook (ch. 7) proposes: only the combiner touches persistent
// memory, and it writes back the net effect of a whole batch with one pfence (format 2).
// combine(batch) serves one combining pass, in this order (each step a linearization point,
// LP, in the order the trace records):
//   1. size / front / back are answered from the committed state at the start of the pass;
//   2. push/pop pairs are eliminated per side (push_back with pop_back, push_front with
//      pop_front): the pop returns the pushed value, memory is untouched;
//   3. reserve (growth to the largest capacity asked for), then the remaining pushes,
//      push_backs then push_fronts: the ring grows first if the committed elements plus all
//      of them would not fit (REPLACE, below);
//   4. the remaining pops, pop_fronts then pop_backs (they may take elements pushed in step 3);
//   5. write-back: the pushed values that are still in the deque after step 4 (kept) are
//      stored into their ring slots, front ones with stores + pwb, back ones with stores
//      only (coalesced deferral, below); the state record the larger epoch does not name
//      gets {head, size, redo: the kept front values, then the deferred back range} and,
//      stored last, epoch + 1; pwb of its line; ONE pfence (PP: the whole batch is
//      durable). More values than the record's redo room (deque_redo_room: 4 elements of 8
//      bytes) go by NT stores (or stores + pwb: no-nt), the deferred ones still in the
//      deque are written back, and a pfence of their own precedes a record without redo
//      (two fences). Responses are published by the engine only after that.
// A batch costs one pfence (two past the redo room); eliminated pairs, pushes popped again in
// the same pass, and reads cost nothing. Format 1 ordered the values with a fence of their
// own in every pass that kept a push (deque_options::one_fence = false keeps that protocol
// as the ablation two-fence, which never defers).
//
// Coalesced deferred write-back of back pushes (issue 23, after the vector's deferral,
// persistent_vector_core.hpp). A FIFO queue's values are popped long after they are pushed,
// so the vector's one-pass deferral would save nothing; coalescing does. The deferred range
// D (deferred_, in DRAM) is the last |D| elements of the committed deque: back values stored
// through the cache and not written back. Every record lists all of D still in the deque
// (redo_back = |D'|, D' = D minus what this pass popped, plus this pass's kept back
// pushes), so a pass needs kept_front + |D'| <= the redo room for its one fence. While
// |D'| < write_back_at (3 of 4) the pass writes no value line back; at 3 or more it writes
// D's lines back (one or two lines for three or four adjacent values, instead of one line
// per pass) and STILL lists them: its record may be the state once whole, before its pfence
// completed; after that pfence D is empty. Pops from either end that reach into D shrink
// it; a growth's copy (NT stores, pfence) writes everything back, D empty after; a core made
// on an existing header (open after a clean exit, whose caches may never have reached the
// media) takes the state's back redo as D; recovery replays the redo and commits a record
// without it. Front pushes (deque) keep the per-pass write-back. No media change: redo
// still means "values whose ring copy may not be durable", which recovery copies into the
// ring. Measured: docs/results.md, "Coalesced deferred write-back in the PFC queue".
//
// Growth (REPLACE, thesis Alg 5.8, with the buddy heap's confirm protocol, as in
// persistent_vector_core.hpp): allocate the new ring, copy each committed element to its slot
// under the new capacity, pfence; log {new data, new capacity} and tag = REPLACE in one line,
// pwb, pfence (PP: the commit point of the growth; recovery finishes it from here); then
// deque_finish_replace (deque_recovery.hpp): deallocate the old ring (the heap keeps it until
// confirmed; durable before the install), confirm the new one; install data/capacity, pwb,
// pfence; tag = NOP (no write-back: an installed REPLACE is a no-op at recovery); confirm
// the deallocation. Head and size do not change: element k lives in slot
// (head + k) mod capacity under either capacity (deque_layout.hpp).
//
// Differences from the thesis's vector: the state is {head, size} of a ring, two words that
// a batch may both change, committed, as the vector's format 2 does, through two state
// records of a line each (after the PBcomb state copies of Fatourou, Kallimanis and Kosmas,
// PPoPP 2022, with no index to flip: the epoch inside the record is its commit point). Pushes
// are applied before pops within a pass (rather than the reverse) so that no push ever needs
// a slot a pop of the same pass freed: every slot a pass writes lies outside the committed
// range [head, head + size) (the capacity check in step 3 counts all pushes against the
// committed size), so a pass that crashes half way leaves the committed deque intact. This is
// the hazard of DFC defect #9 (docs/references.md: a linked deque reusing a node the committed
// version still holds), ruled out here by construction rather than by a check. Recovery
// redoes the install unless both data offset and capacity match the log (the vector compares
// the offset alone, which would keep a stale capacity if only the first of the two stores of
// that line had persisted: harmless for a vector, fatal for a ring whose slot mapping is the
// capacity; the vector now compares both too). The cleared REPLACE tag is not written back,
// as in the vector: flush mutation testing showed the write-back redundant.
// A push or reserve that cannot grow the ring fails without changing anything, and its
// caller gets the reason: grow() returns the heap's exception (or an out_of_memory of its own
// when the byte count would overflow), which travels in the response (deque_response::error)
// and is rethrown in the caller's thread (combined.hpp), as for the vector. The growth fails
// in allocate, before its first write, so crash consistency is the successful growth's.
// NT stores and elimination can be switched off (ablations).
//
// Crash consistency. Persistent: the header (deque_layout.hpp) and the ring.
//   LP of a pass's pushes and pops: their place in the order above (the trace records it);
//   PP: the pass's pfence in step 5. A pass writes the record that is not the state, epoch
//   last: after a crash before its pfence that record is on the media either whole (its
//   epoch persisted, so did every earlier store to its line) or with its old, smaller epoch,
//   and then the other record, untouched by this pass and made durable by the previous
//   pass's pfence, is the state, with the ring's slots in its range as that pass left them
//   (a pass writes only slots outside the committed range, below), except the values its
//   redo lists. With the new record the state, its redo values are the kept front pushes and
//   the deferred back range whether or not their stores reached the media: recovery copies
//   them (deque_replay_redo). Invariant (deferral): any record that can be the state after a
//   crash lists in its redo every element of its range whose ring copy its pass did not find
//   durable. The pass that writes D's lines back lists them too, and only the passes after
//   its pfence omit them; a pass that omits D (the two-fence path) writes D's lines back before its own pfence,
//   which precedes its record. Popped values are in no range; their slots are outside the
//   committed range, free for later pushes. Past the redo room the values are durable (their
//   own pfence) before any record names them. A record's redo is needed only until the
//   ring's copy is durable, and two records suffice: the state's record was made durable by
//   the previous pass's pfence, so the record this pass overwrites is never needed again.
// Recovery, after the heap's own recover() and before its finish_recovery():
//   confirm the header block and the ring (create() persists the anchor, then confirms:
//     a crash in between would otherwise let finish_recovery() free a live deque);
//   tag = REPLACE: deque_finish_replace again (idempotent: if the header does not name the
//     new ring yet, deallocate the old one, confirm the new one and install it; clear the tag;
//     confirm the deallocation);
//   then the state record's redo values are copied into the ring now installed (a growth
//     finishes its install before the pass writes values or a record), pfence, and a record
//     of the same state without redo is committed (deque_replay_redo). Ring slots outside
//     the state are never read.
//
// Validation: the media is not trusted. open() and recover() first run validate_deque
// (deque_recovery.hpp: every header word in its domain, the ring and any REPLACE target live
// heap blocks big enough and not the header's, the selected state's size within the
// capacity, the element size as T's); a header that fails throws damaged_pool and nothing is
// written. After that, combine() may use every word as it stands: the passes keep the
// invariants the validator checks (capacity a power of two, size <= capacity, capacity x
// sizeof(T) within the ring's block).
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <exception>
#include <new>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "ferrite/combining/publication.hpp"
#include "ferrite/containers/deque_layout.hpp"
#include "ferrite/containers/deque_ops.hpp"
#include "ferrite/containers/deque_recovery.hpp"
#include "ferrite/containers/publish.hpp"
#include "ferrite/containers/vector_ops.hpp"
#include "ferrite/error.hpp"
#include "ferrite/pmem/pool.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace ferrite::containers {

struct deque_options {
    bool nt_stores = true;    // non-temporal stores for pushed values and the growth copy
    bool elimination = true;  // push/pop elimination inside a pass
    // Passes whose kept pushes fit a state record's redo room commit with one pfence; false:
    // always a pfence between the values and a record without redo (format 1's two fences:
    // the ablation two-fence).
    bool one_fence = true;
};

// Heap requirements: as persistent_vector_core's (allocate, confirm_allocation, deallocate,
// confirm_replacement, confirm_deallocation; idempotent after a crash; state and block_size
// for validation).
template <class T, class Heap, combining::combining_trace<deque_request<T>, deque_response<T>> Trace = no_trace>
class persistent_deque_core {
    static_assert(std::is_trivially_copyable_v<T>,
                  "ferrite::deque stores elements in persistent memory by copying bytes: use a "
                  "trivially copyable element type (offset_ptr instead of raw pointers)");

public:
    using request = deque_request<T>;
    using response = deque_response<T>;
    using slot_type = combining::slot<request, response>;

    // Create a deque in `pool`: its header block and a ring of at least `initial_capacity`
    // elements (rounded up to a power of two; 0: no ring until the first push); stores the
    // header's pool offset into `anchor` (a persistent word of the caller's), makes it
    // durable and confirms the blocks.
    static deque_header* create(const pmem::pool_ref& pool, Heap& heap, std::uint64_t& anchor,
                                std::size_t initial_capacity = 16) {
        if (anchor != 0) throw usage_error("the anchor already refers to a structure; open it instead");
        auto* h = static_cast<deque_header*>(heap.allocate(sizeof(deque_header)));
        std::memset(h, 0, sizeof(deque_header));
        h->magic = deque_magic;
        h->element_size = sizeof(T);
        h->state[0].epoch = 1;  // the state: empty
        void* data = nullptr;
        if (initial_capacity > 0) {
            const auto cap = std::bit_ceil(std::uint64_t{initial_capacity});
            data = heap.allocate(cap * sizeof(T));
            h->data = offset_of(pool, data);
            h->capacity = cap;
        }
        publish_new(pool, heap, anchor, h, sizeof(deque_header), data);
        return h;
    }

    // The deque `anchor` names, validated for elements of T (validate_deque; throws
    // damaged_pool, or error for anchor 0). Changes nothing.
    static deque_header* open(const pmem::pool_ref& pool, const Heap& heap, std::uint64_t anchor) {
        (void)validate_deque(pool, heap, anchor, sizeof(T));
        return deque_header_at(pool, anchor);
    }

    persistent_deque_core(const pmem::pool_ref& pool, Heap& heap, deque_header* h, deque_options opts = {},
                          Trace trace = {})
        : pool_(pool), base_(pool.base()), heap_(&heap), h_(h), opts_(opts), trace_(std::move(trace)),
          // A header opened after a clean exit (or made by recovery, whose record has no redo):
          // the state's back redo values may never have left a cache, so they stay deferred.
          deferred_(state(h).redo_back) {}

    // Recovery (see the header comment); call between the heap's recover() and finish_recovery().
    // Validates first (for elements of T): a damaged header throws before anything is written.
    static void recover(const pmem::pool_ref& pool, Heap& heap, std::uint64_t anchor) {
        (void)open(pool, heap, anchor);
        recover_deque(pool, heap, anchor);
    }

    FERRITE_FLOW_ROOT void combine(std::span<slot_type*> batch) noexcept {
        for (auto& l : lists_) l.clear();
        const deque_state st = state(h_);
        std::uint64_t reserve_to = 0;
        bool reserves = false;
        for (auto* s : batch) {
            auto& r = s->response;
            switch (s->request.op) {
                case deque_op::reserve:
                    reserves = true;
                    reserve_to = std::max(reserve_to, s->request.n);
                    continue;
                case deque_op::size: r = {true, {}, st.size}; break;
                case deque_op::front:
                    r = {st.size > 0, {}, 0};
                    if (r.ok) r.value = ring()[st.head & mask()];
                    break;
                case deque_op::back:
                    r = {st.size > 0, {}, 0};
                    if (r.ok) r.value = ring()[(st.head + st.size - 1) & mask()];
                    break;
                default: list(s->request.op).push_back(s); continue;  // the four modifiers
            }
            trace_.applied(s->request, r);  // LP: reads, at the start of the pass
        }
        auto push_backs = std::span(list(deque_op::push_back));
        auto pop_backs = std::span(list(deque_op::pop_back));
        auto push_fronts = std::span(list(deque_op::push_front));
        auto pop_fronts = std::span(list(deque_op::pop_front));
        if (opts_.elimination) {
            eliminate(push_backs, pop_backs);
            eliminate(push_fronts, pop_fronts);
        }

        if (reserves) {
            const std::exception_ptr failed = grow(reserve_to);
            for (auto* s : batch)
                if (s->request.op == deque_op::reserve) {
                    const bool ok = s->request.n <= h_->capacity;
                    s->response = {ok, {}, h_->capacity, ok ? nullptr : failed};
                    trace_.applied(s->request, s->response);  // LP
                }
        }

        // Pushes. Offsets are relative to the committed head: the committed elements are
        // [0, size), the deque after each step [lo, hi). Every push fits beside the committed
        // elements (growing first), so no slot of the committed state is written.
        const auto size0 = static_cast<std::int64_t>(st.size);
        std::uint64_t room = push_backs.size() + push_fronts.size();
        std::exception_ptr failed;  // why the pushes that do not fit fail
        if (room > 0) failed = grow(st.size + room);
        if (failed) room = h_->capacity - st.size;  // push what fits
        std::int64_t lo = 0, hi = size0;
        for (auto* s : push_backs) {
            s->response = {room > 0, {}, 0, room > 0 ? nullptr : failed};
            if (s->response.ok) --room, ++hi;
            trace_.applied(s->request, s->response);  // LP
        }
        for (auto* s : push_fronts) {
            s->response = {room > 0, {}, 0, room > 0 ? nullptr : failed};
            if (s->response.ok) --room, --lo;
            trace_.applied(s->request, s->response);  // LP
        }
        const T* d = ring();
        const auto value_at = [&](std::int64_t o) {
            if (o >= size0) return push_backs[static_cast<std::size_t>(o - size0)]->request.value;
            if (o < 0) return push_fronts[static_cast<std::size_t>(-1 - o)]->request.value;
            return d[(st.head + static_cast<std::uint64_t>(o)) & mask()];
        };

        // Pops, from the deque the pushes left (they may take this pass's pushes).
        for (auto* s : pop_fronts) {
            s->response = {lo < hi, {}, 0};
            if (s->response.ok) s->response.value = value_at(lo++);
            trace_.applied(s->request, s->response);  // LP
        }
        for (auto* s : pop_backs) {
            s->response = {lo < hi, {}, 0};
            if (s->response.ok) s->response.value = value_at(--hi);
            trace_.applied(s->request, s->response);  // LP
        }

        // Write-back: the pushed values still in the deque (popped again in this pass: never
        // written), front ones at offsets [lo, front_end), back ones at [back_begin, hi). The
        // deferred back values (deferred_, the last ones of the committed deque: [d0, size0))
        // still in the deque after the pops are [max(d0, lo), min(size0, hi)); with this
        // pass's kept back pushes they form the new deferred range [dfrom, hi).
        std::uint64_t head = st.head + static_cast<std::uint64_t>(lo);
        const auto size = static_cast<std::uint64_t>(hi - lo);
        if (size == 0) head = st.head;  // any head describes an empty deque
        if (head != st.head || size != st.size) {
            const std::int64_t front_end = std::min<std::int64_t>(0, hi), back_begin = std::max(size0, lo);
            const std::int64_t d0 = size0 - static_cast<std::int64_t>(deferred_), dfrom = std::max(d0, lo);
            const auto deferred = static_cast<std::uint64_t>(std::max<std::int64_t>(0, hi - dfrom));
            values_.clear();
            for (std::int64_t o = lo; o < front_end; ++o) values_.push_back(push_fronts[static_cast<std::size_t>(-1 - o)]->request.value);
            const auto kept_front = values_.size();
            const auto pos = [&](std::int64_t o) { return st.head + static_cast<std::uint64_t>(o); };
            if (opts_.one_fence && kept_front + deferred <= redo_room) {
                // One fence. Front values: plain stores + pwb, in this record's redo. Back
                // values: plain stores (the next pops read these lines: an NT store would
                // evict them), NOT written back while the deferred range fits the redo room
                // (coalesced deferral: adjacent values share a line, so one pwb per line
                // later instead of one per pass now); the record lists the whole deferred
                // range. Once it reaches the threshold, this pass writes its lines back AND
                // still lists them (the record may count as the state before the pfence).
                for (std::int64_t o = dfrom; o < hi; ++o) values_.push_back(value_at(o));
                const auto* bytes = reinterpret_cast<const std::byte*>(values_.data());
                if (kept_front > 0) deque_store_ring(pool_, h_, pos(lo), bytes, kept_front * sizeof(T), false);
                T* r = ring();
                for (std::int64_t o = back_begin; o < hi; ++o)  // element stores: no library call in the pass
                    r[pos(o) & mask()] = values_[kept_front + static_cast<std::size_t>(o - dfrom)];
                const bool write_back = deferred >= write_back_at;
                if (write_back) deque_pwb_ring(pool_, h_, pos(dfrom), deferred * sizeof(T));
                write_state(head, size, kept_front, deferred);  // LP; PP: its pfence makes the pass durable
                deferred_ = write_back ? 0 : deferred;
            } else {
                // Two fences: the kept values by NT stores (or stores + pwb), the deferred
                // ones still in the deque written back, pfence, a record without redo.
                for (std::int64_t o = back_begin; o < hi; ++o) values_.push_back(push_backs[static_cast<std::size_t>(o - size0)]->request.value);
                const auto kept_back = values_.size() - kept_front;
                const auto* bytes = reinterpret_cast<const std::byte*>(values_.data());
                const auto carried_to = std::min(size0, hi);
                if (carried_to > dfrom) deque_pwb_ring(pool_, h_, pos(dfrom), static_cast<std::uint64_t>(carried_to - dfrom) * sizeof(T));
                if (!values_.empty()) {
                    deque_store_ring(pool_, h_, pos(lo), bytes, kept_front * sizeof(T), opts_.nt_stores);
                    deque_store_ring(pool_, h_, pos(back_begin), bytes + kept_front * sizeof(T), kept_back * sizeof(T), opts_.nt_stores);
                }
                if (!values_.empty() || carried_to > dfrom) pmem::pfence();  // PP: the values are durable before a record drops them
                write_state(head, size, 0, 0);  // LP; PP: its pfence makes the pass durable
                deferred_ = 0;
            }
        }
        trace_.pass_done();
    }

    // Sequential view (single-threaded use, e.g. after recovery).
    std::uint64_t size() const noexcept { return state(h_).size; }
    std::uint64_t capacity() const noexcept { return h_->capacity; }
    // The elements, front to back.
    std::vector<T> contents() const {
        const auto st = state(h_);
        std::vector<T> out;
        out.reserve(st.size);
        for (std::uint64_t k = 0; k < st.size; ++k) out.push_back(ring()[(st.head + k) & mask()]);
        return out;
    }
    deque_header* header() const noexcept { return h_; }
    Trace& trace() noexcept { return trace_; }
    // Throws usage_error naming `what` once the pool is closed (the header would dangle).
    void require_open(const char* what) const { pool_.require_open(what); }

private:
    static std::uint64_t offset_of(const pmem::pool_ref& pool, const void* p) noexcept {
        return static_cast<std::uint64_t>(static_cast<const std::byte*>(p) - pool.base());
    }
    static const deque_state& state(const deque_header* h) noexcept { return deque_committed(*h); }
    T* ring() const noexcept { return h_->data ? reinterpret_cast<T*>(base_ + h_->data) : nullptr; }
    std::uint64_t mask() const noexcept { return h_->capacity - 1; }
    std::vector<slot_type*>& list(deque_op op) noexcept { return lists_[static_cast<std::size_t>(op)]; }

    // The pass's commit (deque_commit, which recovery's replay shares): the record that is
    // not the state gets {head, size, the first kept_front + kept_back values of values_},
    // epoch last; pwb; pfence.
    FERRITE_FLOW_ROOT void write_state(std::uint64_t head, std::uint64_t size, std::size_t kept_front, std::size_t kept_back) noexcept {
        deque_commit(h_, head, size, kept_front, kept_back, reinterpret_cast<const std::byte*>(values_.data()));
    }

    static constexpr std::uint64_t redo_room = deque_redo_room(sizeof(T));
    // A pass whose deferred range reaches this many values writes their lines back: three of
    // a record's four 8-byte values (a pass that does not leaves at most two, so the next
    // pass's one fence still has room for two kept values of its own), all of a smaller room.
    static constexpr std::uint64_t write_back_at = redo_room >= 4 ? redo_room - 1 : std::max<std::uint64_t>(redo_room, 1);

    // Store `n` bytes durable-on-next-fence: NT stores, or plain stores + pwb (ablation).
    void store(void* dst, const void* src, std::size_t n) noexcept {
        if (opts_.nt_stores) return pmem::nt_memcpy(dst, src, n);
        std::memcpy(dst, src, n);
        pmem::pwb_range(dst, n);
    }

    // Pair pushes[i] with pops[i] (LP: the push, then the pop at once); drop the pairs.
    void eliminate(std::span<slot_type*>& pushes, std::span<slot_type*>& pops) noexcept {
        const auto n = std::min(pushes.size(), pops.size());
        for (std::size_t i = 0; i < n; ++i) {
            pushes[i]->response = {true, {}, 0};
            pops[i]->response = {true, pushes[i]->request.value, 0};
            trace_.applied(pushes[i]->request, pushes[i]->response);
            trace_.applied(pops[i]->request, pops[i]->response);
        }
        pushes = pushes.subspan(n);
        pops = pops.subspan(n);
    }

    // Grow to at least `needed` elements (doubling). Null once grown, else why not, having
    // changed nothing: the exception of the heap's allocate (std::bad_alloc /
    // ferrite::out_of_memory, confirm_table_full, usage_error), or an out_of_memory of our own
    // when the byte count would overflow. The combiner must not throw: the callers hand it to
    // the operations that needed the growth (deque_response::error).
    FERRITE_FLOW_ROOT std::exception_ptr grow(std::uint64_t needed) noexcept {
        if (needed <= h_->capacity) return nullptr;
        std::uint64_t cap = 0;
        void* fresh = nullptr;
        try {
            if (needed > (std::uint64_t{1} << 62) / sizeof(T))
                throw out_of_memory("ferrite::deque: cannot grow to " + std::to_string(needed) + " elements of " +
                                    std::to_string(sizeof(T)) + " bytes: the byte count exceeds 2^62");
            cap = std::bit_ceil(std::max<std::uint64_t>(needed, std::max<std::uint64_t>(h_->capacity * 2, 8)));
            fresh = heap_->allocate(cap * sizeof(T));
        } catch (...) {  // nothing written yet: the deque and the heap are unchanged
            return std::current_exception();
        }
        // Copy element k from slot (head + k) mod old capacity to (head + k) mod cap, in runs.
        const auto st = state(h_);
        const T* from = ring();
        T* to = static_cast<T*>(fresh);
        for (std::uint64_t k = 0; k < st.size;) {
            const auto src = (st.head + k) & mask(), dst = (st.head + k) & (cap - 1);
            const auto run = std::min({st.size - k, h_->capacity - src, cap - dst});
            store(&to[dst], &from[src], run * sizeof(T));
            k += run;
        }
        if (st.size > 0) pmem::pfence();  // PP: the copy is durable before the log names it
        deferred_ = 0;                     // the copy wrote every element back
        h_->replace_data = offset_of(pool_, fresh);
        h_->replace_capacity = cap;
        std::atomic_signal_fence(std::memory_order_release);
        h_->log_tag = deque_log_tag::replace;  // same line as the target: persists no earlier
        pmem::pwb(&h_->log_tag);
        pmem::pfence();  // PP: REPLACE committed; recovery finishes it from here
        deque_finish_replace(pool_, *heap_, h_);
        return nullptr;
    }

    pmem::pool_ref pool_;
    std::byte* base_;  // pool_.base() (an out-of-line call), fixed while the pool is open
    Heap* heap_;
    deque_header* h_;
    deque_options opts_;
    Trace trace_ FERRITE_FLOW_SKIP;
    std::vector<slot_type*> lists_[4] FERRITE_FLOW_SKIP;  // combiner's scratch, indexed by deque_op (pushes, pops)
    std::vector<T> values_ FERRITE_FLOW_SKIP;             // the pass's redo: kept front pushes in deque order, then back ones
    // The deferred back values: the last deferred_ elements of the committed state, stored in
    // the ring through the cache and not written back; the state record's redo_back lists them.
    std::uint64_t deferred_ FERRITE_FLOW_SKIP = 0;
};

}  // namespace ferrite::containers
