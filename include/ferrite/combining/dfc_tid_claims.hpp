// ferrite/combining/dfc_tid_claims.hpp: one thread per DFC thread id at a time.
//
// Algorithm: not in the papers, which assume that thread i alone announces in record i
// (alg. 1-12 write the record without synchronisation). Two threads announcing as one id
// overwrite each other's slot and seq, and acknowledged operations are lost (200,000
// enqueues that returned true from two threads on one id left 112-126k in the queue). So each
// id gets a volatile owner word, 0 = free, else the sync::this_thread_token() of the thread
// that holds it:
//   claim(tid)    fast path: owner == my token (one relaxed load, one compare, one TLS load).
//                 Slow path: CAS 0 -> my token (acquire: the last holder's stores to the
//                 record are visible); held by another thread: usage_error, nothing changed.
//                 The claim is noted in a thread_local list first, so the thread's exit
//                 releases it (a claim never outlives its thread).
//   release(tid)  by the holder: CAS my token -> 0 (release); a free id: no-op; an id held by
//                 another thread: usage_error (that thread may be inside an operation).
// Tokens are never reused, so a stale owner word never matches a later thread (no ABA), and
// the thread_local list holds weak references: a thread that outlives the engine releases
// nothing, an engine that outlives the thread is released.
// Cost: the fast path above on every operation; dfc_options::tid_claims = false (the
// benchmarks' no-tid-claims ablation) leaves the owner words out, and measured against it
// the check did not show above a 2-core VM's noise (docs/dfc.md has the runs).
//
// Crash consistency: none needed. The words are volatile (a crash ends every thread and a
// reopened structure starts with every id free); they are not part of the on-media format
// and no persistence instruction touches them. Under the crash simulator each structure
// opened by a checker gets its own claims, so a worker, stopped inside an operation on the
// live structure, never holds an id of the structure the checker recovered.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>

#include "ferrite/sync/thread_id.hpp"

namespace ferrite::combining {

class dfc_tid_claims : public std::enable_shared_from_this<dfc_tid_claims> {
public:
    // `kind` names the structure in messages ("dfc_queue").
    static std::shared_ptr<dfc_tid_claims> make(unsigned threads, std::string_view kind);

    // Make `tid` (< threads) the calling thread's, or throw usage_error, changing nothing, if
    // a live other thread holds it.
    void claim(unsigned tid) {
        if (owner_[tid].load(std::memory_order_relaxed) != sync::this_thread_token()) [[unlikely]]
            claim_slow(tid);
    }
    // Give `tid` back (the calling thread must hold it, or nobody): see the header comment.
    void release(unsigned tid);
    // The token of the thread holding `tid`, 0 if free (tests, messages).
    std::uint64_t owner(unsigned tid) const noexcept { return owner_[tid].load(std::memory_order_acquire); }

    // Thread exit (the thread_local list): release `tid` if `token` still holds it.
    void release_if_held_by(unsigned tid, std::uint64_t token) noexcept;

    dfc_tid_claims(unsigned threads, std::string_view kind);  // use make()

private:
    void claim_slow(unsigned tid);

    std::unique_ptr<std::atomic<std::uint64_t>[]> owner_;
    std::string_view kind_;  // a string literal (the structure's kind_name)
};

}  // namespace ferrite::combining
