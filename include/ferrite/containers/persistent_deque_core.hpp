// ferrite/containers/persistent_deque_core.hpp: the sequential persistent deque (a growable
// ring buffer) that a combining engine drives; ferrite::deque and ferrite::queue run on it.
//
// Algorithm: the PFC thesis's persistent vector (Stuttgart 2025, Alg 5.6-5.10) carried over to
// a double-ended ring, as its outlook (ch. 7) proposes: only the combiner touches persistent
// memory, and it writes back the net effect of a whole batch with one fence pair.
// combine(batch) serves one combining pass, in this order (each step a linearization point,
// LP, in the order the trace records):
//   1. size / front / back are answered from the committed state at the start of the pass;
//   2. push/pop pairs are eliminated per side (push_back with pop_back, push_front with
//      pop_front): the pop returns the pushed value, memory is untouched;
//   3. reserve (growth to the largest capacity asked for), then the remaining pushes,
//      push_backs then push_fronts: the ring grows first if the committed elements plus all
//      of them would not fit (REPLACE, below);
//   4. the remaining pops, pop_fronts then pop_backs (they may take elements pushed in step 3);
//   5. write-back: the pushed values that are still in the deque after step 4 are stored
//      into their ring slots (non-temporal stores, or stores + pwb), ONE pfence; the new
//      {head, size} goes into the state copy the epoch does not select, then epoch + 1, one
//      pwb of that line, pfence (PP: the whole batch is durable). Responses are published by
//      the engine only after that.
// A batch costs at most two pfences however large it is (one if it only pops); eliminated
// pairs, pushes popped again in the same pass, and reads cost nothing.
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
// a batch may both change, so it is committed through two alternating copies selected by an
// epoch word in the same line (the vector's single size word needs no such thing). Pushes
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
//   PP: the epoch line's pfence in step 5. Pushed values are durable (first pfence) before
//   the epoch names a state that holds them; the copy is stored before the epoch in the same
//   line, so an epoch on the media always selects a complete copy.
// Recovery, after the heap's own recover() and before its finish_recovery():
//   confirm the header block and the ring (create() persists the anchor, then confirms:
//     a crash in between would otherwise let finish_recovery() free a live deque);
//   tag = REPLACE: deque_finish_replace again (idempotent: if the header does not name the
//     new ring yet, deallocate the old one, confirm the new one and install it; clear the tag;
//     confirm the deallocation).
// Pushes and pops need no recovery: the epoch is their commit point, and ring slots outside
// the selected state are never read.
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
        : pool_(pool), heap_(&heap), h_(h), opts_(opts), trace_(std::move(trace)) {}

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
        const std::int64_t pushed_back = hi - size0, pushed_front = -lo;
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

        // Write-back: the pushed values still in the deque, then the state.
        bool stored = false;
        const auto keep = [&](std::int64_t o, const T& v) {
            if (o < lo || o >= hi) return;  // popped again in this pass: never needs memory
            store(&ring()[(st.head + static_cast<std::uint64_t>(o)) & mask()], &v, sizeof(T));
            stored = true;
        };
        for (std::int64_t k = 0; k < pushed_back; ++k) keep(size0 + k, push_backs[static_cast<std::size_t>(k)]->request.value);
        for (std::int64_t k = 0; k < pushed_front; ++k) keep(-1 - k, push_fronts[static_cast<std::size_t>(k)]->request.value);
        if (stored) pmem::pfence();  // PP: the values are durable before the state names them
        deque_state next{st.head + static_cast<std::uint64_t>(lo), static_cast<std::uint64_t>(hi - lo)};
        if (next.size == 0) next.head = st.head;  // any head describes an empty deque
        if (next.head != st.head || next.size != st.size) commit(next);
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
    static deque_state state(const deque_header* h) noexcept { return h->copy[h->epoch & 1]; }
    T* ring() const noexcept { return h_->data ? reinterpret_cast<T*>(pool_.base() + h_->data) : nullptr; }
    std::uint64_t mask() const noexcept { return h_->capacity - 1; }
    std::vector<slot_type*>& list(deque_op op) noexcept { return lists_[static_cast<std::size_t>(op)]; }

    // The commit point of a pass: the copy the epoch does not select, then the epoch.
    FERRITE_FLOW_ROOT void commit(deque_state next) noexcept {
        const auto epoch = h_->epoch + 1;
        h_->copy[epoch & 1] = next;
        // Same line as the copy, stored after it: the epoch persists no earlier than the copy.
        std::atomic_signal_fence(std::memory_order_release);
        h_->epoch = epoch;  // commit point of the pass's pushes and pops
        pmem::pwb(&h_->epoch);
        pmem::pfence();  // PP: the pass is durable
    }

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
    Heap* heap_;
    deque_header* h_;
    deque_options opts_;
    Trace trace_ FERRITE_FLOW_SKIP;
    std::vector<slot_type*> lists_[4] FERRITE_FLOW_SKIP;  // combiner's scratch, indexed by deque_op (pushes, pops)
};

}  // namespace ferrite::containers
