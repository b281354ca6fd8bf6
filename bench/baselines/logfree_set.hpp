// bench/baselines/logfree_set.hpp: the log-free durable linked list and hash set of David,
// Dragojevic, Guerraoui, Zablotchi ("Log-Free Concurrent Data Structures", USENIX ATC 2018),
// written from that paper's description (docs/references.md) as the `logfree-list` and
// `logfree-hash` baselines of the durable sets (issue 18).
//
// Algorithm. A Harris lock-free sorted list of 64-byte nodes {key, value, next} in persistent
// memory, whose links ARE persistent (unlike link-free and SOFT, which persist no link):
//   * a node is written and persisted (pwb + pfence) before it is linked, so a durable link
//     never leads to garbage;
//   * every link change (insert's link, remove's logical-deletion mark, the unlink of a marked
//     node) goes through link-and-persist or, by default, the link cache (link_cache.hpp:
//     the link is CASed with an "unpersisted" bit and written back, now or in a batch);
//   * find(key) is Harris's traversal: it unlinks the marked nodes it meets (each unlink is a
//     link change as above) and returns the window (left link, right node);
//   * no operation depends on a link that is not durable: every link a traversal passes
//     that still carries the unpersisted bit (and the found node's own next) is written back
//     (one pwb each, one pfence for all, then the bits are cleared; an insert's node pfence
//     covers them), and, with the cache, the cache is settled for the key before the
//     operation returns (its parked links written back). contains/get are wait-free (no
//     unlinking), as in the paper.
// Hash set: a fixed array of such lists (heads are link words in the pool), bucket =
// splitmix64(key) masked to the bucket count, which the subject chooses from --keys for load
// factor 1 as in the paper (no resizing: the log-free hash table is fixed-size).
//
// Crash consistency (the paper's argument; not crash-tested here, the baseline is measured
// only): the persistent image is always a sorted list from each head. A node is durable
// (pwb, pfence) before the CAS that links it, so a durable link never leads to an unwritten
// node; every link change is one 8-byte word, so the image holds either the old or the new
// link; a durable deletion mark means "removed" (recovery would unlink marked nodes); a link
// loses its unpersisted bit only after a pwb of a line holding it and a pfence, so a clean
// link is durable, and an operation returns only after the links it passed and its answer
// rests on are clean (with the cache: except the updater's own parked link, see above).
//
// Costs per operation (pwb/pfence), uncontended:
//   without the cache: successful insert 2/2 (node, link); successful remove 2/2 (mark,
//     unlink); contains and failed updates 0/0 unless they meet an unpersisted link (then
//     one pwb per such link and one pfence).
//   with the cache (the default, as in the paper's evaluation): successful insert 1/1 (the
//     node) plus its share of a batch write-back (<= 1 pwb per parked link, 1 pfence per
//     batch of up to 6); remove 0/0 plus its share of the batches; any operation on a key
//     with parked links, or whose path passes an unpersisted link, writes them back (one
//     pfence in all).
//
// What differs from the paper / the authors' library:
//   * no NV-epochs and no reclamation: nodes come from a scratch arena (scratch_arena.hpp,
//     per-thread bump allocation in pool files) and unlinked nodes are never reused, so the
//     pool grows by one 64-byte slot per successful insert during a run. This favours the
//     baseline slightly (no allocator or epoch cost) and rules out ABA through a reused node.
//   * no recovery: the benchmark never reopens a structure (a restart would unlink marked
//     nodes and free unreachable slots of the active areas; milliseconds in the paper).
//   * the parked link keeps its unpersisted bit (see link_cache.hpp), so every thread whose
//     path passes it helps; the authors clear the mark at once and rely on the table only,
//     and flush only the last two links of a search (a key found behind a node whose own
//     link is still parked could then be lost by a crash after contains returned true).
//   * keys and values are 8-byte integers (the benchmark's vocabulary).
// Persistence goes through ferrite/pmem/primitives.hpp only, so `ferrite bench` counts it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>

#include "bench/baselines/link_cache.hpp"
#include "bench/baselines/scratch_arena.hpp"

namespace ferrite::bench::logfree {

struct alignas(64) node {
    std::uint64_t key;
    std::uint64_t value;
    link next;
};
static_assert(sizeof(node) == 64, "one log-free node per cache line");

inline std::uint64_t mix(std::uint64_t x) noexcept {  // splitmix64's finalizer
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

class logfree_set {
public:
    struct options {
        std::uint64_t buckets = 1;      // 1: one list; else rounded up to a power of two
        bool use_link_cache = true;     // false: link-and-persist at every link change
        unsigned threads = 1;           // thread ids 0..threads-1 may insert
        std::uint64_t expected_nodes = 0;  // sizes the first pool segment
        std::filesystem::path pool_dir;    // empty: /dev/shm
        std::uint64_t segment_bytes = scratch_arena::min_segment_bytes;  // later pool segments
    };

    explicit logfree_set(const options& o);
    logfree_set(const logfree_set&) = delete;
    logfree_set& operator=(const logfree_set&) = delete;

    // Before any operation, single-threaded: keys 2i with value i for i < n, in O(n), all
    // persisted (one pfence).
    void prefill(std::uint64_t n);

    bool insert(unsigned tid, std::uint64_t key, std::uint64_t value);  // false: present
    bool erase(std::uint64_t key);                                     // false: absent
    std::optional<std::uint64_t> get(std::uint64_t key);
    bool contains(std::uint64_t key) { return get(key).has_value(); }

    std::uint64_t bucket_count() const noexcept { return mask_ + 1; }
    std::size_t pool_segments() const { return arena_.segments(); }

    // For tests (quiescent structure only): members in order per bucket, links still carrying
    // the unpersisted bit (reachable ones, heads included), links parked in the cache.
    std::uint64_t size() const;
    std::uint64_t unpersisted_links() const;
    std::size_t parked_links() const noexcept { return cache_.parked(); }
    void write_back_cache() noexcept { cache_.write_back_all(); }
    // Whether every link on the path from key's head to the node holding key (or to where it
    // would be) is free of the unpersisted bit.
    bool path_persisted(std::uint64_t key) const;

private:
    struct window {
        link* left;               // the link that points at right
        std::uintptr_t left_value;  // its value when read (right | flag bits)
        node* right;              // first unmarked node with key >= the key, or null
    };

    static node* ptr(std::uintptr_t v) noexcept { return reinterpret_cast<node*>(v & ~flag_bits); }
    static std::uintptr_t word(const node* n) noexcept { return reinterpret_cast<std::uintptr_t>(n); }

    link& head(std::uint64_t h) const noexcept { return heads_[h & mask_]; }
    using path_batch = flush_batch<8>;
    // Harris's search; unpersisted links it passes are written back into `path`.
    window find(std::uint64_t key, std::uint64_t h, path_batch& path);
    bool change(std::uint64_t h, link& l, std::uintptr_t expected, std::uintptr_t desired);

    scratch_arena arena_;
    std::uint64_t mask_ = 0;
    link* heads_ = nullptr;
    bool use_cache_ = true;
    link_cache cache_;
};

}  // namespace ferrite::bench::logfree
