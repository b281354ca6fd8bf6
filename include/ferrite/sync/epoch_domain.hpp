// ferrite/sync/epoch_domain.hpp: epoch-based memory reclamation (volatile only).
//
// INTERFACE FIXED BY THE DURABLE-SETS PLAN (issue 18); implementation in src/sync/epoch_domain.cpp.
//
// Lock-free structures unlink a node while other threads may still be reading it. A thread
// pins the domain around every operation that dereferences shared nodes; an unlinked node is
// retired, and its reclaim function runs only when no thread that could hold a reference
// (every thread pinned when it was retired) is still pinned.
//
//   ferrite::sync::epoch_domain domain;
//   {
//       auto pinned = domain.pin();                    // cheap: no lock, no persistence
//       ... read shared nodes, unlink one ...
//       domain.retire(node, [](void* p, void* ctx) { ... }, ctx);   // reclaimed later
//   }
//
// Algorithm: Fraser's epoch-based reclamation (K. Fraser, "Practical lock-freedom", PhD
// thesis, Cambridge 2004, ch. 5), the scheme [SETS] uses through ssmem, the ASCYLIB allocator
// (docs/references.md; [SETS] L567-587: "a global counter to indicate the current epoch, and each thread is either in an
// epoch ... or idle ... objects in the free-list related to epoch e - 2 can safely be
// reclaimed"). A global epoch E (64 bits, never wraps); per thread (sync::this_thread_id()) a
// record with a cache line of its own holding the announcement (E << 1 | active), and limbo
// bags, one per recent epoch.
//   pin (outermost):  e := E; announce (e, active); re-read E and announce again until it
//                     still equals e ("validated" announcement); nested pins only count.
//                     The announcement is a plain store when the process has the asymmetric
//                     fence (below), else a seq_cst exchange.
//   unpin (outermost): announce idle (release store); every 64th unpin of a thread with
//                     retired nodes: collect.
//   retire:           append to the bag of the caller's validated epoch e_p (tag e_p); every
//                     64th retire of the thread: collect.
//   collect:          try to advance (E == e and every active record announced e, scanning
//                     the records this domain ever created: then CAS E from e to e + 1; a lag
//                     means return, never wait), then run the caller's bags with tag + 3 <= E.
//                     With the asymmetric fence, an advance runs the heavy fence between its
//                     load of E and its scan, and advances are rationed (the heavy fence is
//                     a system call that interrupts the other running threads): a retire's
//                     collect advances only if E has not moved since the thread's previous
//                     collect (another thread is advancing for it), an unpin's only every
//                     16th time and only if the thread retired nothing and E did not move
//                     since the previous such check (src/sync/epoch_domain.cpp).
//
// The asymmetric fence (not in Fraser; the scheme of userspace RCU's membarrier flavour): a
// pin's announcement must be visible to a scan before the pinned thread reads a node that
// may be unlinked later (the StoreLoad order the seq_cst exchange buys). An exchange is a
// full barrier on every operation: it serialises each lookup behind the previous one's cache
// misses (measured: soft-hash lookups at 1M keys ran about 1.5x faster without it). Instead
// the advancing thread calls membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), which makes every
// running thread of the process execute a full barrier (a thread not running passed one when
// it was switched out), so the rare advance pays for the frequent pin. Chosen once per process
// when the kernel offers and registers the command (FERRITE_EPOCH_FENCE=exchange forces the
// exchange); src/sync/epoch_domain.cpp.
// Each record keeps 4 bags indexed by tag mod 4; the bags of the last 3 epochs (E-2..E) hold
// what is not yet safe, and a bag found with an older tag when it is reused is run first.
//
// What differs from Fraser / ssmem, and why:
//   * Bags are tagged with the retiring thread's own validated epoch and run at E >= tag + 3,
//     not tag + 2. Tagging with the announced epoch and running at + 2 is unsafe: U pins at
//     0; E becomes 1; R pins at 1 and reads node n; U unlinks n and retires it with tag 0,
//     unpins; E becomes 2 (R announced 1 = E); U pins at 2 and frees n under R. Fraser tags
//     with the global epoch read after the unlink, which is safe only with a seq_cst fence
//     pair (retire and pin) in the C++ model; one more epoch of delay needs no fence on
//     retire and no assumption about the memory order of the structure's own accesses.
//   * ssmem keeps a vector clock per released list; a single global epoch is enough here
//     because nothing waits: collection is a try (Fraser's), and under the crash simulator's
//     token scheduler (one thread runs at a time) a spin on another thread would hang.
//   * pin and unpin are inline: a one-entry thread_local cache maps the domain's id (unique
//     in the process, never its address) to the thread's record, so an operation pays a
//     compare, a store and a load of E; the first pin of a thread on a domain takes the
//     slow path (this_thread_id, the record, created if needed) and fills the cache.
//   * Records are per domain (one domain per table), created lazily by their thread in a
//     fixed array of max_thread_ids pointers (8 KiB per domain); the advance scan covers the
//     ids this domain ever saw (its own seq_cst high-water mark, which the S-order argument
//     below needs, rather than sync::thread_id_high_water()).
//   * A thread that exits leaves its bags in its record; the next thread with the same id
//     (ids are reused, sync/thread_id.hpp) takes the record over with them; reclaim_all()
//     and the destructor run whatever is left.
//
// Why it is safe (the two-epoch argument, made exact). S is the single total order of the
// seq_cst operations (E loads/CAS, announcements, the record pointers).
//   1. While R stays pinned with validated epoch e_r, E <= e_r + 1. R's exchange precedes its
//      re-read of E (which returned e_r) in S, which precedes the CAS to e_r + 1; a thread
//      advancing from e_r + 1 loaded E = e_r + 1 and then R's record, later in S, so it sees
//      R's announcement (e_r != e_r + 1, active) and does not advance.
//   2. U retires n with tag e_p, its validated epoch while it unlinked n. Any R that reached n
//      (its load of the link precedes the unlink) announced e_r <= e_p + 1: E can only pass
//      e_p + 1 after a scan read a store of U made after its announcement of e_p (its unpin,
//      release, or a later pin), so the unlink happens before that scan's CAS, which happens
//      before any pin that reads E >= e_p + 2, and such a pin cannot load the old link.
//   3. So while such an R is pinned, E <= e_p + 2 (by 1); collect runs n only after it read
//      E >= e_p + 3 (acquire), written after a scan read R's unpin (release): R's reads of n
//      happen before the reclaim function.
//   1'. With the asymmetric fence, argument 1 without S for R's announcement: A, advancing
//      from e_r + 1, loads E = e_r + 1, runs membarrier, then scans. R executes a full barrier
//      F at some point of A's membarrier. If R's announcement precedes F, A's scan sees it
//      (or a later store of R) and does not advance. Otherwise R's re-read of E follows F, which
//      follows A's load of e_r + 1 (membarrier orders A's earlier accesses before F), so R
//      reads E >= e_r + 1 and its announcement of e_r is not validated: a contradiction.
//      Arguments 2 and 3 use only release/acquire and E, unchanged.
//
// Rules (what the crash simulator and the structures rely on):
//   * pin(), retire() and the guard's destructor never wait for another thread (no lock, no
//     spin on another thread's progress): under the simulator's token scheduler only one
//     thread runs at a time. Advancing the epoch is a try: it fails and returns when some
//     pinned thread lags. (pin re-reads E until its announcement matches: each retry means E
//     advanced, i.e. the system progressed; it is lock-free, bounded in practice by 2.)
//   * Reclaim functions run on the retiring thread (inside retire() or the guard's
//     destructor, after a threshold of retired nodes), or in reclaim_all() / the destructor.
//     They must not throw. They may pin and retire on the same domain (the bag being run is
//     set aside first).
//   * The thread that retires a node must have been pinned, without a break, since before it
//     unlinked it (argument 2 uses its epoch at the unlink).
//   * pin() nests (a guard inside a guard on the same thread is allowed and cheap). A guard
//     is destroyed on the thread that created it.
//   * Thread records are per domain, indexed by sync::this_thread_id(): at most
//     max_thread_ids threads pinned at once. A thread that exits leaves its limbo lists
//     behind; they are reclaimed by later threads with the same id or by the destructor.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace ferrite::sync {

class epoch_domain {
    struct thread_record;  // per thread (id) and domain: src/sync/epoch_domain.cpp

public:
    // The part of a thread's record that pin and unpin touch, here so that their fast path
    // is inline (a call to this_thread_id and a record lookup per operation measurably cost
    // SOFT's lookups the overlap of one lookup's cache misses with the next one's:
    // docs/results.md, "SOFT lookups"). thread_record (the .cpp) derives from it.
    struct record_base {
        // Shared: written by the owner, read by every advance scan; a line of its own.
        std::atomic<std::uint64_t> announcement{0};  // announced(e) or 0: idle
        // Owner-private.
        alignas(64) unsigned depth = 0;  // nesting of pins
        std::uint64_t epoch = 0;         // validated epoch of the outermost pin
        unsigned retires = 0;
        unsigned unpins = 0;
        unsigned unpin_collects = 0;
        std::size_t held = 0;  // items in the bags
    };

    using reclaim_fn = void (*)(void* node, void* context);

    epoch_domain();
    // Runs every pending reclaim function. No thread may be pinned.
    ~epoch_domain();
    epoch_domain(const epoch_domain&) = delete;
    epoch_domain& operator=(const epoch_domain&) = delete;

    class guard {
    public:
        guard(guard&& other) noexcept;
        guard& operator=(guard&&) = delete;
        ~guard();  // unpins (if outermost); may reclaim this thread's old limbo lists
    private:
        friend class epoch_domain;
        guard(epoch_domain* d, record_base* r) noexcept : domain_(d), record_(r) {}
        epoch_domain* domain_;
        record_base* record_;  // the pinning thread's record; nullptr once moved from
    };

    // Enter a critical section on the calling thread. Fast path: the thread's record for
    // this domain from a one-entry thread-local cache keyed by the domain's id (never by its
    // address, which a later domain may reuse).
    [[nodiscard]] guard pin() {
        pin_cache& c = tl_pin_cache_;
        if (c.domain == id_) [[likely]] {
            record_base* r = c.record;
            if (r->depth++ == 0) announce(*r);
            return guard(this, r);
        }
        return pin_slow();
    }

    // `node` is unreachable for threads that pin from now on; reclaim(node, context) runs
    // once no thread that was pinned at this call is still in that critical section.
    // The calling thread must be pinned (usage_error otherwise).
    void retire(void* node, reclaim_fn reclaim, void* context);

    // Quiescent use only (no thread pinned or inside a call on this domain, their earlier
    // calls happening before this one: e.g. tests, shutdown): runs every pending reclaim
    // function now.
    void reclaim_all();

    // Retired nodes whose reclaim function has not run yet (approximate while threads run).
    std::size_t pending() const noexcept;

private:
    struct pin_cache {
        std::uint64_t domain;  // ids start at 1; zero-initialised (thread storage duration)
        record_base* record;
    };
    static inline thread_local pin_cache tl_pin_cache_;

    static constexpr std::uint64_t announced(std::uint64_t epoch) noexcept { return epoch << 1 | 1; }
    // Announce (e, active) and validate against E (the header comment's pin).
    void announce(record_base& r) noexcept {
        std::uint64_t e = epoch_->load(std::memory_order_seq_cst);
        for (;;) {
            if (light_) {
                r.announcement.store(announced(e), std::memory_order_relaxed);
                std::atomic_signal_fence(std::memory_order_seq_cst);
            } else {
                r.announcement.exchange(announced(e), std::memory_order_seq_cst);
            }
            const std::uint64_t now = epoch_->load(std::memory_order_seq_cst);
            if (now == e) break;
            e = now;
        }
        r.epoch = e;
    }
    guard pin_slow();
    void unpin(record_base& r) noexcept {
        if (--r.depth != 0) return;
        // release: everything this section read happens before a scan that sees it idle
        // (arguments 2 and 3).
        r.announcement.store(0, std::memory_order_release);
        if (r.held != 0) [[unlikely]] unpin_collect(r);
    }
    void unpin_collect(record_base& r) noexcept;
    void collect(thread_record& r, bool pinned, bool advance) noexcept;  // (try to advance,) run safe bags
    bool try_advance() noexcept;

    struct state;
    std::unique_ptr<state> state_;
    std::atomic<std::uint64_t>* epoch_;  // E, in *state_
    std::uint64_t id_;                   // unique per domain in the process, from 1
    bool light_;                         // the asymmetric fence is on (pins store, not exchange)
};

inline epoch_domain::guard::~guard() {
    if (record_ != nullptr) domain_->unpin(*record_);
}

}  // namespace ferrite::sync
