// ferrite/containers/persistent_vector_core.hpp: the sequential persistent vector that a
// combining engine drives (PFC thesis, Alg 5.6-5.10).
//
// combine(batch) serves one combining pass, in this order (each a linearization point, LP):
//   1. size / capacity / get are answered from the state at the start of the pass;
//   2. swaps, through an undo log: the original elements of every index the swaps touch are
//      logged and made durable, the log is committed (tag = SWAP), the swaps are applied and
//      written back, one pfence, the log is cleared (tag = NOP);
//   3. push/pop pairs are eliminated: the pop returns the pushed value, memory is untouched;
//   4. reserve, then the remaining pushes: the array grows if needed (REPLACE, below), the
//      record after the state's in the ring (the oldest) gets {size + n, redo = the c
//      deferred elements below `size` and the n values}, and, stored last, epoch + 1, pwb of its
//      line; the deferred elements' lines are written back (pwb), the n values stored after
//      `size` through the cache and NOT written back: they become the deferred ones, held by
//      this record until the next pass that keeps them writes their lines back; ONE pfence
//      (PP: the pushes are durable). More pushes than the record's redo room (vector_redo_room: 5 elements of 8
//      bytes) put a pfence between the values and a record without redo (two fences);
//   5. the remaining pops: a record {max(0, size - n), redo = the deferred elements still
//      below the new size}, epoch last, pwb, those elements' lines pwb, pfence (PP), elements
//      handed out. A deferred element popped is never written back (1 pwb per operation at
//      one thread on push-pop, not 1.5: the record's line alone).
// A pass of pushes or of pops costs one pfence (two past the redo room, whose values go by
// non-temporal stores, or stores + pwb: the no-nt ablation); eliminated pairs cost nothing. The thesis (and format 1 of this file) ordered the values before `size`
// with a fence of their own: 1.5 pfences per operation at one thread on push-pop.
//
// Growth (REPLACE, thesis Alg 5.8, with the buddy heap's confirm protocol): allocate the new
// array, copy, pfence; log {new data, new capacity} and tag = REPLACE in one line, pwb,
// pfence (PP); confirm the new array and deallocate the old one in one confirm-slot store
// (heap confirm_replacement: the old array stays referenced by the heap until confirmed, and
// no free slot is needed, so other heap users cannot make a committed growth fail); install
// data/capacity, pwb, pfence; tag = NOP (not written back: see vector_drop_replace_log);
// confirm the deallocation.
//
// Differences from the thesis: swaps use an *undo* log of the original elements of the
// distinct indices touched (the thesis logs per-swap values and needs the overlapping-swap
// rule at recovery, Alg 5.10, whose extracted loop bound is wrong: the undo log makes
// overlapping swaps trivially right); swaps beyond the log's capacity are served in
// chunks. A pass whose pushes fit the state record writes them with plain stores (written back later: deferred, below),
// not the thesis's NT stores: the element lines stay cached for the pops that read them next,
// and on the project's VM movnti + sfence cost a 1-thread push-pop about a quarter of its
// throughput (docs/results.md, "One fence per pass"). A push or reserve that cannot grow the array fails without changing anything and
// its caller gets the reason: the heap's exception (std::bad_alloc / ferrite::out_of_memory
// when exhausted, confirm_table_full, usage_error for a heap left unrecovered), or
// ferrite::out_of_memory when the byte count would overflow, travels in the response
// (vector_response::error) and the caller's handle rethrows it (combined.hpp). The thesis
// aborts; an earlier ferrite answered a plain `false` that hid which of these happened. The
// growth fails before its first write (allocate throws before anything is copied or logged),
// so the vector and the heap are as they were: crash consistency is the successful growth's.
// NT stores can be switched off (ablation).
//
// Deferred write-back (issue 23). The state record's redo always holds every element
// below its size that may not be durable in the array: a push pass's values are stored but
// not written back (deferred, [deferred_from_, deferred_to_), volatile), so the record that
// names them repeats them; the next pass that keeps them (a push pass below its new values,
// a pop pass below its new size) repeats them in its own record AND writes their lines back,
// so after its pfence they are durable and the pass after it, which overwrites the first
// record, no longer needs them. Carried and new values must fit the redo room together, else
// the pass writes everything back and fences before a record without redo (two fences, as
// before). A swap pass writes the deferred lines back and fences before its record without
// redo; a growth's copy writes every element back. A core made on an existing header (open,
// after recovery or a clean exit, whose caches may never have reached the media) treats the
// state's redo elements as deferred.
//
// The state records (vector_layout.hpp; after the PBcomb state copies of Fatourou,
// Kallimanis and Kosmas, PPoPP 2022, but with no index to flip: the epoch inside the record
// is its own commit point, stores to one line persisting in program order; and eight of them
// in a ring, not two, format 3: a pass then stores to a line whose write-back finished eight
// passes ago, not two, which costs a 1-thread pass about 15 ns less on the project's VM,
// vector_layout.hpp). A pass writes the record after the state's, the oldest, epoch last;
// the core keeps the state's index in DRAM (cur_), recovery and open find it as the largest
// epoch. After a crash before the pass's pfence the new record is on the media either whole
// (its epoch persisted, so did every earlier store to its line) or with its old epoch,
// smaller than the state's: the state's record, untouched by this pass and
// made durable by the previous pass's pfence, is the state, and the array below its size is
// as that pass left it (a pass writes only at and above the size it starts from; swaps,
// which write below, commit a record without redo first, below). With the new record the
// state, its redo values are the pushes' elements whether or not their NT stores reached
// the array: recovery copies them (vector_replay_redo). A record's redo is needed only
// until the array's copy is durable: the pass's own pfence does that, and the record is
// overwritten eight passes later (two would do: the deferral below needs two). Swaps: a
// swap chunk whose state record holds redo values first writes a record {size, redo 0}
// (pwb, ordered by the chunk's first pfence), so a recovery never copies stale pushes over
// swapped elements. Growth: recovery finishes an
// interrupted REPLACE before the replay, into the array that is then installed (its copy
// was taken after the pass that wrote the record had made its values durable).
//
// Crash consistency. Persistent: the header (vector_layout.hpp) and the array. Recovery,
// after the heap's own recover() and before its finish_recovery():
//   confirm the header block and the array (create() persists the anchor, then confirms:
//     a crash in between would otherwise let finish_recovery() free a live vector);
//   tag = SWAP: restore every logged original, pwb, pfence, then tag = NOP (pwb, pfence: a
//     later swap batch rewrites the entries before re-committing the tag, so the cleared tag
//     must be durable first). The swaps of the interrupted pass had not returned.
//   tag = REPLACE: if the array is not yet the logged one, confirm_replacement(new, old)
//     (idempotent), install it (pwb, pfence); tag = NOP (no write-back: a repeated
//     recovery finds the logged array installed and does nothing); confirm the deallocation.
//   then the state record's redo values are copied into the array (pwb, pfence).
// Pops need no recovery: the state record is their commit point, and elements beyond its
// size are never read.
//
// Validation: the media is not trusted. open() and recover() first run validate_vector
// (vector_recovery.hpp: every header word in its domain, the array and any REPLACE target
// live heap blocks big enough and not the header's, the swap log's indices below the size,
// the element size and alignment as T's); a header that fails throws damaged_pool and nothing
// is written. After that, combine() may use every word as it stands: the passes keep the
// invariants the validator checks (size <= capacity, capacity x sizeof(T) within the array's
// block, at most swap_log_capacity undo entries).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <span>
#include <type_traits>
#include <vector>

#include "ferrite/combining/publication.hpp"
#include "ferrite/containers/vector_layout.hpp"
#include "ferrite/containers/vector_ops.hpp"
#include "ferrite/containers/publish.hpp"
#include "ferrite/containers/vector_recovery.hpp"
#include "ferrite/error.hpp"
#include "ferrite/pmem/pool.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace ferrite::containers {

struct vector_options {
    bool nt_stores = true;    // non-temporal stores for pushed values and log entries
    bool elimination = true;  // push/pop elimination inside a pass
    // Pushes that fit a state record's redo room commit with one pfence; false: always a
    // pfence between the values and a record without redo (format 1's two fences: ablation).
    bool one_fence = true;
};

// Heap requirements (alloc::buddy_heap satisfies them): allocate(bytes) -> void* (throws
// std::bad_alloc when exhausted), confirm_allocation(p), deallocate(p),
// confirm_replacement(fresh, old) (confirm fresh and deallocate old without a second
// confirm slot), confirm_deallocation(p); all idempotent after a crash as the confirm
// protocol requires; and, for validation, state(p) -> alloc::block_state and block_size(p)
// (usable bytes of an allocated block).
template <class T, class Heap, combining::combining_trace<vector_request<T>, vector_response<T>> Trace = no_trace>
class persistent_vector_core {
    static_assert(undo_layout(sizeof(T), alignof(T)).original_offset == offsetof(swap_undo_entry<T>, original) &&
                      undo_layout(sizeof(T), alignof(T)).stride == sizeof(swap_undo_entry<T>),
                  "recovery computes the undo entries' layout from the element's size and alignment");
    static_assert(std::is_trivially_copyable_v<T>,
                  "ferrite::vector stores elements in persistent memory by copying bytes: use a "
                  "trivially copyable element type (offset_ptr instead of raw pointers)");

public:
    using request = vector_request<T>;
    using response = vector_response<T>;
    using slot_type = combining::slot<request, response>;

    // Create a vector in `pool`: allocates its header block and an array of
    // `initial_capacity`, stores the header's pool offset into `anchor` (a persistent word
    // of the caller's, e.g. in the pool root), makes it durable and confirms the blocks.
    static vector_header* create(const pmem::pool_ref& pool, Heap& heap, std::uint64_t& anchor,
                                 std::size_t initial_capacity = 16, std::size_t swap_log_capacity = 64) {
        if (anchor != 0) throw usage_error("the anchor already refers to a vector; open it instead");
        if (swap_log_capacity < 2)
            throw usage_error("a vector's swap log needs room for at least 2 entries (one swap), not " +
                              std::to_string(swap_log_capacity));
        auto* h = static_cast<vector_header*>(heap.allocate(vector_block_bytes<T>(swap_log_capacity)));
        std::memset(h, 0, sizeof(vector_header));
        h->magic = vector_magic;
        h->state[0].epoch = 1;  // the state: size 0
        h->element_size = sizeof(T);
        h->element_align = alignof(T);
        h->swap_log_capacity = swap_log_capacity;
        void* data = nullptr;
        if (initial_capacity > 0) {
            try {
                if (initial_capacity > SIZE_MAX / sizeof(T)) throw std::bad_alloc();
                data = heap.allocate(initial_capacity * sizeof(T));
            } catch (...) {
                release_unpublished(heap, h);  // a failed create leaves no block behind
                throw;
            }
            h->data = offset_of(pool, data);
            h->capacity = initial_capacity;
        }
        publish_new(pool, heap, anchor, h, sizeof(vector_header), data);
        return h;
    }

    // The vector `anchor` names, validated for elements of T (validate_vector; throws
    // damaged_pool, or error for anchor 0). Changes nothing.
    static vector_header* open(const pmem::pool_ref& pool, const Heap& heap, std::uint64_t anchor) {
        (void)validate_vector(pool, heap, anchor, {sizeof(T), alignof(T)});
        return vector_header_at(pool, anchor);
    }

    persistent_vector_core(const pmem::pool_ref& pool, Heap& heap, vector_header* h, vector_options opts = {},
                           Trace trace = {})
        : pool_(pool), heap_(&heap), h_(h), cur_(vector_current(*h)), size_(h->state[cur_].size),
          redo_(h->state[cur_].redo), opts_(opts), trace_(std::move(trace)) {
        // The state's redo elements may never have been written back (a pass defers them, and
        // a clean exit does not write caches back): treat them as deferred.
        const auto& st = h->state[cur_];
        deferred_from_ = st.size - st.redo;
        deferred_to_ = st.size;
    }

    // Recovery (see the header comment); call between the heap's recover() and finish_recovery().
    // Validates first (for elements of T): a damaged header throws before anything is written.
    static void recover(const pmem::pool_ref& pool, Heap& heap, std::uint64_t anchor) {
        (void)open(pool, heap, anchor);
        recover_vector(pool, heap, anchor);
    }

    FERRITE_FLOW_ROOT void combine(std::span<slot_type*> batch) noexcept {
        pushes_.clear();
        pops_.clear();
        swaps_.clear();
        std::uint64_t reserve_to = 0;
        for (auto* s : batch) {
            auto& r = s->response;
            switch (s->request.op) {
                case vector_op::size: r = {true, {}, size()}; trace_.applied(s->request, r); break;
                case vector_op::capacity: r = {true, {}, h_->capacity}; trace_.applied(s->request, r); break;
                case vector_op::get:
                    r = {s->request.a < size(), {}, 0};
                    if (r.ok) r.value = data()[s->request.a];
                    trace_.applied(s->request, r);
                    break;
                case vector_op::push_back: pushes_.push_back(s); break;
                case vector_op::pop_back: pops_.push_back(s); break;
                case vector_op::swap: swaps_.push_back(s); break;
                case vector_op::reserve: reserve_to = std::max(reserve_to, s->request.a); s->response = {true, {}, 0}; break;
            }
        }
        apply_swaps();
        std::size_t eliminated = 0;
        if (opts_.elimination) {
            eliminated = std::min(pushes_.size(), pops_.size());
            for (std::size_t i = 0; i < eliminated; ++i) {  // LP: push i, then pop i at once
                pushes_[i]->response = {true, {}, 0};
                pops_[i]->response = {true, pushes_[i]->request.value, 0};
                trace_.applied(pushes_[i]->request, pushes_[i]->response);
                trace_.applied(pops_[i]->request, pops_[i]->response);
            }
        }
        apply_reserve(reserve_to, batch);
        apply_pushes(std::span(pushes_).subspan(eliminated));
        apply_pops(std::span(pops_).subspan(eliminated));
        trace_.pass_done();
    }

    // Sequential view (single-threaded use, e.g. after recovery).
    std::uint64_t size() const noexcept { return size_; }
    std::uint64_t capacity() const noexcept { return h_->capacity; }
    const T* data() const noexcept { return array(pool_, h_); }
    T* data() noexcept { return array(pool_, h_); }
    vector_header* header() const noexcept { return h_; }
    Trace& trace() noexcept { return trace_; }
    // Throws usage_error naming `what` once the pool is closed (the header would dangle).
    void require_open(const char* what) const { pool_.require_open(what); }

private:
    // Give back a block that create() allocated but never published (no anchor refers to it).
    static void release_unpublished(Heap& heap, void* block) noexcept {
        try {
            heap.confirm_allocation(block);
            heap.deallocate(block);
            heap.confirm_deallocation(block);
        } catch (...) {
            // Left pending: the heap's next recovery frees an unconfirmed block.
        }
    }
    static std::uint64_t offset_of(const pmem::pool_ref& pool, const void* p) noexcept {
        return static_cast<std::uint64_t>(static_cast<const std::byte*>(p) - pool.base());
    }
    static T* array(const pmem::pool_ref& pool, const vector_header* h) noexcept {
        return h->data ? reinterpret_cast<T*>(pool.base() + h->data) : nullptr;
    }
    static swap_undo_entry<T>* log_entries(vector_header* h) noexcept {
        return reinterpret_cast<swap_undo_entry<T>*>(reinterpret_cast<std::byte*>(h) + sizeof(vector_header));
    }
    // Store `n` bytes durable-on-next-fence: NT stores, or plain stores + pwb (ablation).
    void store(void* dst, const void* src, std::size_t n) noexcept {
        if (opts_.nt_stores) return pmem::nt_memcpy(dst, src, n);
        std::memcpy(dst, src, n);
        pmem::pwb_range(dst, n);
    }

    FERRITE_FLOW_ROOT void apply_swaps() noexcept {
        std::size_t next = 0;
        while (next < swaps_.size()) {
            // One chunk: as many swaps as the log has room for (two entries each at most).
            const std::size_t room = h_->swap_log_capacity / 2;
            const std::size_t end = std::min(swaps_.size(), next + std::max<std::size_t>(room, 1));
            auto* entries = log_entries(h_);
            std::uint64_t logged = 0;
            const auto size = this->size();
            T* d = data();
            auto log_index = [&](std::uint64_t i) {
                for (std::uint64_t k = 0; k < logged; ++k)
                    if (entries[k].index == i) return;
                swap_undo_entry<T> e{i, d[i]};
                store(&entries[logged++], &e, sizeof e);
            };
            for (std::size_t k = next; k < end; ++k) {
                const auto& rq = swaps_[k]->request;
                if (rq.a < size && rq.b < size) log_index(rq.a), log_index(rq.b);
            }
            if (logged > 0) {
                // Stale redo values would be copied over the swapped elements at recovery.
                if (redo_ != 0) {
                    if (write_back_deferred(size)) pmem::pfence();  // PP: no redo needed for them
                    write_state(size, {});
                }
                pmem::pfence();  // PP: the undo entries (and the record) are durable before the tag names them
                h_->log_entries = logged;
                h_->log_tag = vector_log_tag::swap;  // same line as the count: persists no earlier
                pmem::pwb(&h_->log_tag);
                pmem::pfence();  // PP: the undo log is committed
            }
            for (std::size_t k = next; k < end; ++k) {
                auto& s = *swaps_[k];
                const auto& rq = s.request;
                s.response = {rq.a < size && rq.b < size, {}, 0};
                trace_.applied(rq, s.response);
                if (s.response.ok) {
                    std::swap(d[rq.a], d[rq.b]);  // LP
                    pmem::pwb_range_pair(&d[rq.a], &d[rq.b], sizeof(T));
                }
            }
            if (logged > 0) {
                pmem::pfence();  // PP: the swapped elements are durable
                vector_clear_log(h_);
            }
            next = end;
        }
    }

    // Grow to at least `needed` elements (doubling). Returns null once grown, else why not,
    // having changed nothing: the exception of the heap's allocate (exhausted or larger than
    // its largest block: std::bad_alloc / ferrite::out_of_memory; no free confirm slot:
    // confirm_table_full; a heap left unrecovered: usage_error, which the catalog and the
    // open checks refuse up front), or an out_of_memory of our own if the byte count would
    // overflow (the doubling below would otherwise never end). The combiner runs other
    // threads' operations and must not throw: the callers hand the exception to the
    // operations that needed the growth (vector_response::error).
    FERRITE_FLOW_ROOT std::exception_ptr grow(std::uint64_t needed) noexcept {
        if (needed <= h_->capacity) return nullptr;
        void* fresh = nullptr;
        std::uint64_t cap = std::max<std::uint64_t>(h_->capacity, 8);
        try {
            if (needed > (std::uint64_t{1} << 62) / sizeof(T))
                throw out_of_memory("ferrite::vector: cannot grow to " + std::to_string(needed) + " elements of " +
                                    std::to_string(sizeof(T)) + " bytes: the byte count exceeds 2^62");
            while (cap < needed) cap *= 2;
            fresh = heap_->allocate(cap * sizeof(T));
        } catch (...) {  // nothing written yet: the vector and the heap are unchanged
            return std::current_exception();
        }
        if (size() > 0) store(fresh, data(), size() * sizeof(T));
        pmem::pfence();  // PP: the copy is durable before the log names it
        deferred_from_ = deferred_to_ = 0;  // the copy wrote every element back
        h_->replace_data = offset_of(pool_, fresh);
        h_->replace_capacity = cap;
        h_->log_tag = vector_log_tag::replace;  // same line as the target: persists no earlier
        pmem::pwb(&h_->log_tag);
        pmem::pfence();  // PP: REPLACE committed; recovery finishes it from here
        const auto old = h_->data;
        if (old != 0)
            heap_->confirm_replacement(fresh, pool_.base() + old);  // fresh's slot now frees old
        else
            heap_->confirm_allocation(fresh);
        vector_install(h_, h_->replace_data, cap);
        vector_drop_replace_log(h_);
        if (old != 0) heap_->confirm_deallocation(pool_.base() + old);
        return nullptr;
    }

    // One growth to the largest reserve of the pass; a reserve the capacity then covers
    // succeeds, the others fail with the growth's exception.
    void apply_reserve(std::uint64_t reserve_to, std::span<slot_type*> batch) noexcept {
        if (reserve_to == 0) return;
        const std::exception_ptr failed = grow(reserve_to);
        for (auto* s : batch)
            if (s->request.op == vector_op::reserve) {
                const bool ok = s->request.a <= h_->capacity;
                s->response = {ok, {}, h_->capacity, ok ? nullptr : failed};
                trace_.applied(s->request, s->response);
            }
    }

    FERRITE_FLOW_ROOT void apply_pushes(std::span<slot_type*> pushes) noexcept {
        if (pushes.empty()) return;
        const auto size = this->size();
        std::size_t n = pushes.size();
        const std::exception_ptr failed = grow(size + n);
        if (failed) n = h_->capacity > size ? h_->capacity - size : 0;  // push what fits
        for (std::size_t i = 0; i < pushes.size(); ++i) {
            pushes[i]->response = {i < n, {}, 0, i < n ? nullptr : failed};
            trace_.applied(pushes[i]->request, pushes[i]->response);
        }
        values_.clear();
        T* const at = data() + size;
        const std::uint64_t carried = deferred_to_ > deferred_from_ ? size - deferred_from_ : 0;
        if (carried + n <= redo_room && opts_.one_fence) {
            // The record carries the deferred elements (written back now) and the pushes'
            // values (stored, written back by the next pass that keeps them: deferred).
            for (std::uint64_t i = size - carried; i < size; ++i) values_.push_back(data()[i]);
            for (std::size_t i = 0; i < n; ++i) values_.push_back(pushes[i]->request.value);
            write_state(size + n, values_);  // LP of the pushes; the record carries their values
            (void)write_back_deferred(size);
            // Plain stores: the next pops read these lines (an NT store would evict them).
            std::memcpy(at, values_.data() + carried, n * sizeof(T));
            pmem::pfence();  // PP: the pushes are durable (their values in the record)
            deferred_from_ = size;
            deferred_to_ = size + n;
        } else {
            for (std::size_t i = 0; i < n; ++i) values_.push_back(pushes[i]->request.value);
            (void)write_back_deferred(size);
            vector_store_elements(at, values_.data(), n * sizeof(T), opts_.nt_stores);  // before a record names them
            write_state(size + n, {});  // LP of the pushes
            pmem::pfence();  // PP: the pushes are durable
        }
    }

    FERRITE_FLOW_ROOT void apply_pops(std::span<slot_type*> pops) noexcept {
        if (pops.empty()) return;
        const auto size = this->size();
        const auto n = std::min<std::uint64_t>(size, pops.size());
        const T* d = data();
        for (std::size_t i = 0; i < pops.size(); ++i) {
            pops[i]->response = {i < n, {}, 0};
            if (i < n) pops[i]->response.value = d[size - 1 - i];
            trace_.applied(pops[i]->request, pops[i]->response);
        }
        // Deferred elements that stay (below the new size) ride in the record and are
        // written back now; those popped need neither.
        const std::uint64_t kept_to = std::min<std::uint64_t>(deferred_to_, size - n);
        values_.clear();
        for (std::uint64_t i = deferred_from_; i < kept_to; ++i) values_.push_back(d[i]);
        write_state(size - n, values_);  // LP of the pops
        (void)write_back_deferred(size - n);
        pmem::pfence();  // PP: the pops are durable
    }

    // pwb the deferred elements below `size` (the pass's pfence makes them durable; none is
    // deferred after it). Returns whether there were any.
    bool write_back_deferred(std::uint64_t size) noexcept {
        const std::uint64_t to = std::min<std::uint64_t>(deferred_to_, size);
        const bool any = to > deferred_from_;
        if (any) {
            // Stored by earlier passes (deferred): the caller fences when this returns true.
            FERRITE_FLOW_STORED_ELSEWHERE(data() + deferred_from_, (to - deferred_from_) * sizeof(T));
            pmem::pwb_range(data() + deferred_from_, (to - deferred_from_) * sizeof(T));
        }
        deferred_from_ = deferred_to_ = 0;
        return any;
    }

    // Write the record after the state's (the oldest): {size, redo = the pushes' values},
    // then, in the same line and stored last, the next epoch; pwb. The caller's pfence
    // commits it; the pass goes on from it (cur_), as recovery would once it is durable.
    void write_state(std::uint64_t size, std::span<const T> redo) noexcept {
        const auto& cur = h_->state[cur_];
        cur_ = vector_next_record(cur_);
        size_ = size;
        redo_ = redo.size();
        auto& next = h_->state[cur_];
        next.size = size;
        next.redo = redo.size();
        if (!redo.empty()) std::memcpy(next.redo_values, redo.data(), redo.size_bytes());
        // Stored after the rest of the line: the epoch persists no earlier than the record.
        std::atomic_signal_fence(std::memory_order_release);
        // The epoch is read from the state's record, not mirrored: with it mirrored too (no
        // record line read in a pass) a 1-thread stack-pfc operation cost 15-25 ns more in CPU
        // time on the project's VM, unexplained (docs/results.md).
        next.epoch = cur.epoch + 1;  // commit point once durable
        pmem::pwb(&next);
    }

    static constexpr std::uint64_t redo_room = vector_redo_room(sizeof(T), alignof(T));

    pmem::pool_ref pool_;
    Heap* heap_;
    vector_header* h_;
    // The state record's index (vector_current of the header), size and redo count, kept here
    // so that a pass does not start with a load from the line the previous pass wrote back
    // (about 10 ns on the project's VM, docs/results.md). Equal to the header's from
    // construction on (only write_state changes the state). Volatile; the combiner's alone.
    std::uint64_t cur_ FERRITE_FLOW_SKIP, size_ FERRITE_FLOW_SKIP, redo_ FERRITE_FLOW_SKIP;
    vector_options opts_;
    Trace trace_ FERRITE_FLOW_SKIP;
    std::vector<slot_type*> pushes_ FERRITE_FLOW_SKIP, pops_ FERRITE_FLOW_SKIP, swaps_ FERRITE_FLOW_SKIP;  // combiner's scratch
    std::vector<T> values_ FERRITE_FLOW_SKIP;
    // Elements [deferred_from_, deferred_to_): stored by the last push pass, not written back,
    // held by the state record's redo (see apply_pushes). Volatile; the combiner's alone.
    std::uint64_t deferred_from_ FERRITE_FLOW_SKIP = 0, deferred_to_ FERRITE_FLOW_SKIP = 0;
};

}  // namespace ferrite::containers
