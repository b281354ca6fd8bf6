// ferrite/sets/split_order.hpp: keys, hashing and the split-ordered bucket directory shared by
// the durable sets (SOFT and link-free, lists and hash tables).
//
// Algorithm: split-ordered lists (Shalev & Shavit, "Split-ordered lists: lock-free extensible
// hash tables", JACM 2006). Every node of a hash table lives in ONE sorted lock-free list,
// ordered by its split-order key (so_key) = the bits of its hash reversed; a bucket is a
// pointer to a sentinel node inside that list. Doubling the bucket count never moves a node:
// bucket b's items are the items of its parent bucket (b with its top bit cleared) whose
// so-keys lie after b's sentinel, so a new bucket is made by inserting one sentinel
// ("lazy initialisation").
//
// What differs from the durable-sets paper (Zuriel et al., OOPSLA 2019): the paper's hash
// sets are a fixed array of lists (L140), no resizing. Here the table grows, and because
// neither algorithm persists links, the directory is purely volatile: no bucket pointer and
// no bucket count reach the media. Recovery recomputes every so-key from the key (a so-key
// is never read from the media as trusted) and rebuilds list and directory in O(n).
//
// What differs from Shalev & Shavit:
//   * order = (so_key, key bytes by memcmp): keys are byte strings, so two keys with one
//     hash are ordered by their bytes (the paper's keys are distinct integers);
//   * regular so_key = reverse_bits(hash) | 1, sentinel so_key of bucket b = reverse_bits(b)
//     (low bit 0): a sentinel and a regular node never tie; the hash's top bit is dropped
//     (bucket counts stay far below 2^63);
//   * the directory is segmented (segment s >= 1 holds buckets [2^(s-1), 2^s), allocated on
//     first use with one CAS), so it never moves and readers need no lock or hazard for it; SOFT keeps its
//     sentinels IN the slots (inline_directory: one line per bucket lookup instead of two
//     dependent misses), link-free keeps pointers to sentinels (bucket_directory);
//   * the list layout (an ordered set, no hashing) is the degenerate case: one bucket whose
//     sentinel is the head (so_key 0), every regular node so_key 1, order by key bytes.
//
// Growth: an approximate count (striped per thread, padded counters); every
// `check_interval` counted inserts of a stripe, when count > load_factor * bucket_count
// (SOFT 1, link-free 2), bucket_count doubles by CAS. No rehash, no stop-the-world. Sentinels are volatile nodes owned by the
// list; they are never removed while the table lives.
//
// Crash consistency: nothing here is persistent. A crash loses the directory and the
// sentinels; recovery rebuilds them from the members (rebuild_split_ordered below): a
// two-level counting sort of the members by bucket (place_sort), then each bucket's sentinel
// and links written in bucket order by up to `recovery_threads` threads over contiguous
// ranges of buckets (link-free's recovery sorts by list place with the same place_sort).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <type_traits>
#include <vector>

#include <sys/mman.h>

#include "ferrite/sync/thread_id.hpp"

namespace ferrite::sets {

// The value type of a set: an empty struct, stored in 0 bytes.
struct no_value {
    friend bool operator==(no_value, no_value) noexcept { return true; }
};

// (Not "layout": node_store_layout.hpp has a namespace sets::layout.)
enum class set_layout : std::uint32_t { list = 1, hash = 2 };

// Payload rules common to both algorithms: one node is one 64-byte line holding 24 bytes of
// the algorithm's own fields, so key + value get 40 bytes.
template <class K, class V>
inline constexpr std::size_t payload_size = sizeof(K) + (std::is_empty_v<V> ? 0 : sizeof(V));

template <class K, class V>
constexpr bool check_payload() {
    static_assert(std::is_trivially_copyable_v<K>,
                  "durable set keys are stored as bytes: use a trivially copyable key type");
    static_assert(std::is_trivially_copyable_v<V>,
                  "durable map values are stored as bytes: use a trivially copyable value type");
    static_assert(payload_size<K, V> <= 40,
                  "a durable set node is one 64-byte line: sizeof(key) + sizeof(value) must be "
                  "<= 40 bytes; store a larger value elsewhere (e.g. a heap offset) and keep its "
                  "offset in the map");
    return true;
}

// ---- bits and hashing ----------------------------------------------------------------

constexpr std::uint64_t reverse_bits(std::uint64_t x) noexcept {
    x = ((x >> 1) & 0x5555555555555555ull) | ((x & 0x5555555555555555ull) << 1);
    x = ((x >> 2) & 0x3333333333333333ull) | ((x & 0x3333333333333333ull) << 2);
    x = ((x >> 4) & 0x0F0F0F0F0F0F0F0Full) | ((x & 0x0F0F0F0F0F0F0F0Full) << 4);
    x = ((x >> 8) & 0x00FF00FF00FF00FFull) | ((x & 0x00FF00FF00FF00FFull) << 8);
    x = ((x >> 16) & 0x0000FFFF0000FFFFull) | ((x & 0x0000FFFF0000FFFFull) << 16);
    return (x >> 32) | (x << 32);
}

// The murmur3 64-bit finalizer: every input bit affects every output bit.
constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

// Hash of the key's bytes (the object representation: keys with padding must zero it).
template <class K>
std::uint64_t hash_key(const K& key) noexcept {
    static_assert(std::is_trivially_copyable_v<K>);
    const auto* bytes = reinterpret_cast<const unsigned char*>(&key);
    if constexpr (sizeof(K) == 8) {
        std::uint64_t w;
        std::memcpy(&w, bytes, 8);
        return mix64(w);
    } else {
        std::uint64_t h = 0x9e3779b97f4a7c15ull ^ (sizeof(K) * 0xbf58476d1ce4e5b9ull);
        std::size_t i = 0;
        for (; i + 8 <= sizeof(K); i += 8) {
            std::uint64_t w;
            std::memcpy(&w, bytes + i, 8);
            h = std::rotl(h ^ mix64(w), 27) * 0x94d049bb133111ebull;
        }
        if (i < sizeof(K)) {
            std::uint64_t w = 0;
            std::memcpy(&w, bytes + i, sizeof(K) - i);
            h = std::rotl(h ^ mix64(w), 27) * 0x94d049bb133111ebull;
        }
        return mix64(h);
    }
}

template <class K>
bool keys_equal(const K& a, const K& b) noexcept {
    return std::memcmp(&a, &b, sizeof(K)) == 0;
}
template <class K>
int compare_keys(const K& a, const K& b) noexcept {
    if constexpr (sizeof(K) == 8) {
        // memcmp's byte order without the call (GCC calls memcmp for a signed 8-byte
        // compare): the words read big-endian compare as the bytes do.
        std::uint64_t x, y;
        std::memcpy(&x, &a, 8);
        std::memcpy(&y, &b, 8);
        if constexpr (std::endian::native == std::endian::little) {
            x = __builtin_bswap64(x);
            y = __builtin_bswap64(y);
        }
        return x == y ? 0 : (x < y ? -1 : 1);
    } else {
        return std::memcmp(&a, &b, sizeof(K));
    }
}

constexpr std::uint64_t regular_so_key(std::uint64_t hash) noexcept { return reverse_bits(hash) | 1; }
constexpr std::uint64_t sentinel_so_key(std::uint64_t bucket) noexcept { return reverse_bits(bucket); }
constexpr bool is_sentinel_so_key(std::uint64_t so_key) noexcept { return (so_key & 1) == 0; }
// The list layout: every regular node has so_key 1 (order by key bytes), the head 0.
inline constexpr std::uint64_t list_so_key = 1;

// A key's place in the list order.
template <class K>
struct search_key {
    std::uint64_t so_key;
    const K* key;  // nullptr for a sentinel
    std::uint64_t hash;
};

template <class K>
search_key<K> make_search_key(const K& key, set_layout l) noexcept {
    if (l == set_layout::list) return {list_so_key, &key, 0};
    const std::uint64_t h = hash_key(key);
    return {regular_so_key(h), &key, h};
}

// Order of a node (so_key, key) against a search key: <0, 0, >0. A sentinel (even so_key)
// never compares equal to a regular key because their so-keys differ.
template <class K>
int compare_position(std::uint64_t node_so_key, const K* node_key, const search_key<K>& s) noexcept {
    if (node_so_key != s.so_key) return node_so_key < s.so_key ? -1 : 1;
    if (is_sentinel_so_key(node_so_key)) return 0;
    return compare_keys(*node_key, *s.key);
}

// ---- approximate count ------------------------------------------------------------------

// Per-thread striped counters: an insert or erase touches its stripe only (relaxed).
class approximate_counter {
public:
    static constexpr unsigned stripes = 64;

    // Adds delta to the caller's stripe; returns the stripe's insert tick after the call
    // (counts only additions), so the caller can act every N inserts.
    std::uint64_t add(std::int64_t delta) noexcept {
        auto& s = stripe_[sync::this_thread_id() % stripes];
        s.count.fetch_add(delta, std::memory_order_relaxed);
        if (delta > 0) return s.ticks.fetch_add(1, std::memory_order_relaxed) + 1;
        return 0;
    }
    std::int64_t sum() const noexcept {
        std::int64_t n = 0;
        for (const auto& s : stripe_) n += s.count.load(std::memory_order_relaxed);
        return n;
    }
    std::size_t approximate() const noexcept {
        const auto n = sum();
        return n > 0 ? static_cast<std::size_t>(n) : 0;
    }
    // Quiescent: the count after a rebuild.
    void reset(std::int64_t n) noexcept {
        for (auto& s : stripe_) {
            s.count.store(0, std::memory_order_relaxed);
            s.ticks.store(0, std::memory_order_relaxed);
        }
        stripe_[0].count.store(n, std::memory_order_relaxed);
    }

private:
    struct alignas(64) stripe {
        std::atomic<std::int64_t> count{0};
        std::atomic<std::uint64_t> ticks{0};
    };
    std::array<stripe, stripes> stripe_{};
};

// ---- the bucket count and its growth ---------------------------------------------------------

// The bucket count (a power of two) and the approximate member count that makes it double;
// shared by both directory layouts below.
class bucket_growth {
public:
    static constexpr std::uint64_t max_buckets = std::uint64_t{1} << 47;

    struct growth {
        bool enabled = true;
        std::uint64_t check_interval = 64;  // inserts of a stripe between two checks, >= 1
        std::uint64_t load_factor = 2;      // grow when count > load_factor * bucket_count
    };

    explicit bucket_growth(growth g) : growth_(g) {
        if (growth_.check_interval == 0) growth_.check_interval = 1;
        if (growth_.load_factor == 0) growth_.load_factor = 1;
    }

    std::uint64_t bucket_count() const noexcept { return bucket_count_.load(std::memory_order_acquire); }
    std::uint64_t load_factor() const noexcept { return growth_.load_factor; }

    // Counts an insert (+1) or erase (-1); after every check_interval inserts of a stripe,
    // doubles the bucket count when the table is loaded beyond the load factor.
    void count(std::int64_t delta) noexcept {
        const std::uint64_t tick = count_.add(delta);
        if (!growth_.enabled || tick == 0 || tick % growth_.check_interval != 0) return;
        grow_if_loaded();
    }
    void grow_if_loaded() noexcept {
        std::uint64_t n = bucket_count();
        const std::int64_t c = count_.sum();
        if (c > 0 && static_cast<std::uint64_t>(c) > growth_.load_factor * n && n < max_buckets)
            bucket_count_.compare_exchange_strong(n, n * 2, std::memory_order_acq_rel);
    }
    std::size_t size() const noexcept { return count_.approximate(); }

    // Recovery (quiescent): bucket count and count after a rebuild.
    void reset(std::uint64_t buckets, std::int64_t members) noexcept {
        bucket_count_.store(buckets, std::memory_order_release);
        count_.reset(members);
    }

    // Directory segments: segment 0 holds bucket 0, segment s >= 1 the buckets [2^(s-1), 2^s),
    // so the segments of a table of 2^k buckets are exactly 0..k and hold 2^k slots: a
    // doubling allocates the new half and nothing more. (Segment s used to hold buckets
    // [2^s - 1, 2^(s+1) - 1): bucket 2^k - 1 alone opened segment k, as large as all the
    // others together, so every table allocated twice the slots it used: 64 MiB of SOFT's
    // directory at 4M keys, allocated and written by each recovery for one bucket.)
    static unsigned segment_of(std::uint64_t b) noexcept { return static_cast<unsigned>(std::bit_width(b)); }
    static std::uint64_t segment_slots(unsigned s) noexcept { return s == 0 ? 1 : std::uint64_t{1} << (s - 1); }
    // (no branch on the lookup path: bucket 0 subtracts 1 >> 1 = 0)
    static std::uint64_t index_in_segment(std::uint64_t b, unsigned s) noexcept { return b - ((std::uint64_t{1} << s) >> 1); }
    static std::uint64_t parent_of(std::uint64_t b) noexcept {
        return b & ~(std::uint64_t{1} << (static_cast<unsigned>(std::bit_width(b)) - 1));
    }

private:
    std::atomic<std::uint64_t> bucket_count_{1};
    growth growth_;
    approximate_counter count_;
};

// ---- the bucket directory ------------------------------------------------------------------

// Segmented array of bucket sentinels: bucket b lives in segment s = bit_width(b) (0 for
// bucket 0) at index b - 2^(s-1); segment s has segment_slots(s) slots, allocated on first use. Slots hold the
// sentinel (nullptr: not initialised yet). Node is the list's volatile node type; the list
// supplies `insert_sentinel(Node* start, std::uint64_t so_key) -> Node*`, which inserts a
// sentinel with that so-key into the list after `start` or returns the one already there
// (insert-or-find: a concurrent initialiser may have won).
template <class Node>
class bucket_directory : public bucket_growth {
public:
    static constexpr unsigned segment_count = 48;

    // bucket 0's sentinel is the list head (so_key 0), owned by the list.
    bucket_directory(Node* head, growth g = {}) : bucket_growth(g) {
        slot(0).store(head, std::memory_order_release);
    }
    ~bucket_directory() {
        for (auto& seg : segments_) delete[] seg.load(std::memory_order_relaxed);
    }
    bucket_directory(const bucket_directory&) = delete;
    bucket_directory& operator=(const bucket_directory&) = delete;

    Node* head() const noexcept { return segments_[0].load(std::memory_order_acquire)[0].load(std::memory_order_acquire); }

    // The sentinel to start a search for `hash` from (initialising its bucket if needed).
    template <class InsertSentinel>
    Node* start_for(std::uint64_t hash, InsertSentinel&& insert_sentinel) {
        const std::uint64_t b = hash & (bucket_count() - 1);
        return bucket(b, insert_sentinel);
    }

    // Bucket b's sentinel, initialised lazily (parent first; depth <= 47).
    template <class InsertSentinel>
    Node* bucket(std::uint64_t b, InsertSentinel&& insert_sentinel) {
        auto& s = slot(b);
        if (Node* n = s.load(std::memory_order_acquire)) return n;
        Node* start = bucket(parent_of(b), insert_sentinel);
        Node* sentinel = insert_sentinel(start, sentinel_so_key(b));
        Node* expected = nullptr;
        // A concurrent initialiser found or inserted the same (unique) sentinel.
        s.compare_exchange_strong(expected, sentinel, std::memory_order_acq_rel);
        return sentinel;
    }

    // Recovery (quiescent): the sentinel of bucket b.
    void set_sentinel(std::uint64_t b, Node* sentinel) { slot(b).store(sentinel, std::memory_order_release); }
    Node* sentinel_if_initialised(std::uint64_t b) const noexcept {
        const unsigned s = segment_of(b);
        if (s >= segment_count) return nullptr;
        auto* seg = segments_[s].load(std::memory_order_acquire);
        return seg ? seg[index_in_segment(b, s)].load(std::memory_order_acquire) : nullptr;
    }

private:
    std::atomic<Node*>& slot(std::uint64_t b) {
        const unsigned s = segment_of(b);
        if (s >= segment_count) __builtin_unreachable();  // b < max_buckets: bucket_count's cap
        auto* seg = segments_[s].load(std::memory_order_acquire);
        if (seg == nullptr) {
            auto* fresh = new std::atomic<Node*>[segment_slots(s)]();
            if (segments_[s].compare_exchange_strong(seg, fresh, std::memory_order_acq_rel))
                seg = fresh;
            else
                delete[] fresh;  // another thread's segment won; seg holds it
        }
        return seg[index_in_segment(b, s)];
    }

    std::array<std::atomic<std::atomic<Node*>*>, segment_count> segments_{};
};

// The same segmented directory holding the sentinels themselves (SOFT): bucket b's sentinel
// IS its slot, a 16-byte Link {next, so_key}, so finding a bucket costs one cache line (the
// slot holds the sentinel's next) instead of a slot and a separately allocated sentinel, and
// four sentinels share a line. Link's default constructor is the blank state of a bucket
// not yet initialised; the list that owns the directory defines that state and the lock-free
// protocol that links a slot into the list (soft_list.hpp, bucket_start). Slots never move:
// a segment is allocated (blank) on first use with one CAS and freed with the directory.
template <class Link>
class inline_directory : public bucket_growth {
public:
    static constexpr unsigned segment_count = 48;

    explicit inline_directory(growth g = {}) : bucket_growth(g) {}
    ~inline_directory() {
        for (unsigned s = 0; s < segment_count; ++s) free_segment(segments_[s].load(std::memory_order_relaxed), s);
    }
    inline_directory(const inline_directory&) = delete;
    inline_directory& operator=(const inline_directory&) = delete;

    // Bucket b's slot (allocating its segment, blank, on first use).
    Link& at(std::uint64_t b) {
        const unsigned s = segment_of(b);
        if (s >= segment_count) __builtin_unreachable();  // b < max_buckets: bucket_count's cap
        Link* seg = segments_[s].load(std::memory_order_acquire);
        if (seg == nullptr) [[unlikely]] seg = install_segment(s);
        return seg[index_in_segment(b, s)];
    }
    // Recovery (rebuild_split_ordered's interface): the slot already is the sentinel; every
    // segment of buckets [0, n) allocated up front, so that the recovery threads never race
    // to allocate one (the loser would build a whole segment for nothing).
    void set_sentinel(std::uint64_t, Link*) noexcept {}
    void reserve(std::uint64_t n) {
        if (n == 0) return;
        for (unsigned s = 0; s <= segment_of(n - 1); ++s)
            if (segments_[s].load(std::memory_order_acquire) == nullptr) install_segment(s);
    }

private:
    Link* install_segment(unsigned s) {
        Link* seg = nullptr;
        Link* fresh = allocate_segment(s);
        if (segments_[s].compare_exchange_strong(seg, fresh, std::memory_order_acq_rel)) return fresh;
        free_segment(fresh, s);  // another thread's segment won; seg holds it
        return seg;
    }
    // Segments of 2 MiB and more are aligned to 2 MiB and offered to transparent huge pages:
    // a lookup's one directory access then rarely walks the page tables.
    static constexpr std::size_t huge_page = std::size_t{2} << 20;
    static std::size_t segment_bytes(unsigned s) noexcept { return sizeof(Link) * segment_slots(s); }
    static std::size_t segment_alignment(unsigned s) noexcept {
        return segment_bytes(s) >= huge_page ? huge_page : alignof(std::max_align_t);
    }
    static Link* allocate_segment(unsigned s) {
        const std::size_t bytes = segment_bytes(s);
        void* raw = ::operator new(bytes, std::align_val_t{segment_alignment(s)});
        if (bytes >= huge_page) (void)::madvise(raw, bytes, MADV_HUGEPAGE);  // advice only
        Link* seg = static_cast<Link*>(raw);
        for (std::size_t i = 0; i < segment_slots(s); ++i) new (seg + i) Link();
        return seg;
    }
    static void free_segment(Link* seg, unsigned s) noexcept {
        if (seg == nullptr) return;
        for (std::size_t i = 0; i < segment_slots(s); ++i) seg[i].~Link();
        ::operator delete(seg, std::align_val_t{segment_alignment(s)});
    }

    std::array<std::atomic<Link*>, segment_count> segments_{};
};

// Bucket count for a table of n members after recovery: next power of two >= n / load_factor
// (the growth rule's load: the table a run of inserts would have grown).
inline std::uint64_t recovered_bucket_count(std::size_t n, std::uint64_t load_factor = 2) noexcept {
    if (load_factor == 0) load_factor = 1;
    const std::uint64_t want = std::max<std::uint64_t>(1, (n + load_factor - 1) / load_factor);  // rounded up
    return std::min<std::uint64_t>(std::bit_ceil(want), std::uint64_t{1} << 47);
}

// The i-th bucket in list order among `buckets` (a power of two) buckets: sentinel so-keys
// are reverse_bits(b), so list order visits buckets by their bits reversed within log2 width.
inline std::uint64_t bucket_in_list_order(std::uint64_t i, std::uint64_t buckets) noexcept {
    if (buckets <= 1) return 0;
    const int width = static_cast<int>(std::bit_width(buckets)) - 1;
    return reverse_bits(i) >> (64 - width);
}

// Recovery helper: runs fn(chunk, begin, end) for `chunks` contiguous ranges splitting
// [0, count), chunk 0 on the caller and the others on their own threads; rethrows the first
// exception after all have joined. chunks <= 1 runs fn(0, 0, count) on the caller.
template <class Fn>
void for_each_range(unsigned chunks, std::uint64_t count, Fn&& fn) {
    if (chunks <= 1) {
        fn(0u, std::uint64_t{0}, count);
        return;
    }
    std::exception_ptr error;
    std::mutex error_mutex;
    auto run = [&](unsigned c) {
        try {
            fn(c, count * c / chunks, count * (c + 1) / chunks);
        } catch (...) {
            std::lock_guard g(error_mutex);
            if (!error) error = std::current_exception();
        }
    };
    std::vector<std::thread> workers;
    workers.reserve(chunks - 1);
    try {
        for (unsigned c = 1; c < chunks; ++c) workers.emplace_back(run, c);
    } catch (...) {
        for (auto& w : workers) w.join();
        throw;
    }
    run(0);
    for (auto& w : workers) w.join();
    if (error) std::rethrow_exception(error);
}

// How many threads a recovery phase over `buckets` buckets cut into `parts` pieces uses:
// `threads` (0 = hardware concurrency), at most one per piece and one per 4096 buckets (a
// thread costs more than a small table).
inline unsigned recovery_chunks(unsigned threads, std::uint64_t buckets, std::uint64_t parts) noexcept {
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    return static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>({threads, buckets / 4096, parts})));
}

// Recovery: items (members, in any order) sorted by their place among `buckets` places,
// the top log2(buckets) bits of the 64-bit place(item): of the so-key for list order
// (link-free; a regular so_key is reverse_bits(hash) | 1, so these are its bucket's bits
// reversed), of the hash's low bits moved to the top for bucket order (SOFT,
// rebuild_split_ordered). A two-level
// counting sort, both levels cache friendly: the constructor splits the items into `parts`
// partitions of consecutive places (a histogram small enough for the L1 cache; one pass to
// count, one to scatter), then sort_partition(p) sorts partition p by place with a count
// array of buckets / parts entries. Partitions are independent: threads may sort distinct
// ones at once. Place i's items are then sorted[start[i], end(i)), in scan order.
template <class T, class Place>
class place_sort {
public:
    place_sort(const std::vector<T>& items, std::uint64_t buckets, Place place)
        : place_(place), width_(static_cast<unsigned>(std::bit_width(buckets)) - 1),
          part_bits_(width_ > 11 ? std::min(width_ - 11, 12u) : 0), part_shift_(width_ - part_bits_),
          parts_(std::uint64_t{1} << part_bits_), part_start_(parts_ + 1, 0), by_part_(items.size()),
          start_(buckets, 0), sorted_(items.size()) {
        for (const T& x : items) ++part_start_[part_of(x) + 1];
        for (std::uint64_t p = 0; p < parts_; ++p) part_start_[p + 1] += part_start_[p];
        std::vector<std::size_t> fill(part_start_.begin(), part_start_.end() - 1);
        for (const T& x : items) by_part_[fill[part_of(x)]++] = x;
    }
    std::uint64_t parts() const noexcept { return parts_; }
    // Places [first_place(p), first_place(p + 1)) make partition p.
    std::uint64_t first_place(std::uint64_t p) const noexcept { return p << part_shift_; }
    // Writes start[] of partition p's places only (its end is part_start[p + 1]).
    void sort_partition(std::uint64_t p) {
        const std::uint64_t i0 = first_place(p), i1 = first_place(p + 1);
        for (std::size_t k = part_start_[p]; k < part_start_[p + 1]; ++k) ++start_[place_of(by_part_[k])];
        std::size_t at = part_start_[p];
        for (std::uint64_t i = i0; i < i1; ++i) {
            const std::size_t count = start_[i];
            start_[i] = at;
            at += count;
        }
        for (std::size_t k = part_start_[p]; k < part_start_[p + 1]; ++k)
            sorted_[start_[place_of(by_part_[k])]++] = by_part_[k];  // start[i] moves to place i's end
        for (std::uint64_t i = i1 - 1; i > i0; --i) start_[i] = start_[i - 1];
        start_[i0] = part_start_[p];
    }
    // Place i's items (partition of i sorted): [begin(i), end(i)).
    std::size_t begin(std::uint64_t i) const noexcept { return start_[i]; }
    std::size_t end(std::uint64_t i) const noexcept {
        const std::uint64_t next = i + 1;
        return (next & ((std::uint64_t{1} << part_shift_) - 1)) == 0 ? part_start_[next >> part_shift_] : start_[next];
    }
    std::vector<T>& sorted() noexcept { return sorted_; }

private:
    std::uint64_t place_of(const T& x) const { return width_ == 0 ? 0 : place_(x) >> (64 - width_); }
    std::uint64_t part_of(const T& x) const { return place_of(x) >> part_shift_; }

    Place place_;  // the so-key of an item
    unsigned width_, part_bits_, part_shift_;
    std::uint64_t parts_;
    std::vector<std::size_t> part_start_;
    std::vector<T> by_part_;
    std::vector<std::size_t> start_;
    std::vector<T> sorted_;
};

// A member for rebuild_split_ordered: its node and its key's hash (recomputed from the key,
// never read from the media), whose low bits are its bucket; 0 for the list layout.
template <class Node>
struct hashed_member {
    std::uint64_t hash;
    Node* node;
};

// Recovery: link `members` (regular nodes, in any order) and one sentinel per bucket into
// one list in split order, in O(n + buckets) plus a sort of each bucket's few nodes; never
// a traversal from the head. Policy:
//   bool less(const Node*, const Node*)        (list order among regular nodes of one bucket)
//   Node* sentinel(std::uint64_t b)            (bucket b's sentinel, b in [1, buckets): the same
//                                              node on every call, its address only; called
//                                              from several threads at once, also for a bucket
//                                              another thread is initialising)
//   void init_sentinel(Node* s, std::uint64_t so_key)
//                                              (once per bucket, by the thread that links it)
//   void link(Node* from, Node* to, bool to_sentinel)
//                                              (from.next := to; to == nullptr ends the list)
//   optional: void drop_duplicate(Node* kept, Node* dropped)
//             (two members at one position, e.g. a SOFT upsert interrupted by the crash:
//             `dropped` is not linked; without this member duplicates are linked as found)
// head is bucket 0's sentinel. The directory is reset to `buckets` buckets, all initialised,
// and its count to the members linked. Returns that count.
//
// Order of the work: BUCKET order, not list order. Every link is known without walking the
// list: inside a bucket its sentinel, then its members sorted; the last of them (or the
// sentinel of an empty bucket) points to the sentinel of the bucket whose place in list order
// comes next (place = the bucket's bits reversed), whose address the policy gives. So each
// bucket is written on its own: the members sorted by bucket (place_sort on the hash's low
// bits, carried with each member so that the sort never reads a node: a bit reversal per
// member in the partition pass, or a node read there, cost the pass 3x at 1M keys: too few
// of its scattered reads were in flight), the directory in address order, ranges of
// buckets on the recovery threads (recovery_chunks) that need no stitching. Written in list
// order (as before), the directory was visited bit-reversed: for SOFT, whose sentinels ARE the
// directory's slots (inline_directory), one cache miss per bucket scattered over the whole
// directory, which outgrows the last-level cache (64 MiB at 4M keys and load factor 1) and
// made recovery super-linear (docs/results.md, "set-recovery"). The members stay where the
// scan put them (any order), so their links are scattered in both orders: they are
// prefetched a few buckets ahead.
template <class Directory, class Node, class Policy>
std::size_t rebuild_split_ordered(Directory& dir, Node* head, const std::vector<hashed_member<Node>>& members,
                                  std::uint64_t buckets, Policy& policy, unsigned threads = 1) {
    using member = hashed_member<Node>;
    const unsigned width = static_cast<unsigned>(std::bit_width(buckets)) - 1;
    // place_sort sorts by the top `width` bits: the bucket's, moved up from the hash's bottom.
    auto bucket_bits = [width](const member& m) -> std::uint64_t { return width == 0 ? 0 : m.hash << (64 - width); };
    place_sort<member, decltype(bucket_bits)> ps(members, buckets, bucket_bits);
    const std::uint64_t parts = ps.parts();
    std::vector<member>& sorted = ps.sorted();
    // The sentinel after bucket b in list order (nullptr after the last place). The bucket at
    // place i is bucket_in_list_order(i), an involution: b's own place is the same function of b.
    const auto successor = [&](std::uint64_t b) -> Node* {
        const std::uint64_t place = bucket_in_list_order(b, buckets);
        return place + 1 == buckets ? nullptr : policy.sentinel(bucket_in_list_order(place + 1, buckets));
    };
    if constexpr (requires { dir.reserve(buckets); }) dir.reserve(buckets);  // no segment race below
    const unsigned chunks = recovery_chunks(threads, buckets, parts);
    std::vector<std::size_t> linked(chunks, 0);
    constexpr std::uint64_t ahead = 8;  // buckets whose members are prefetched ahead of the one being linked
    for_each_range(chunks, parts, [&](unsigned c, std::uint64_t p0, std::uint64_t p1) {
        for (std::uint64_t p = p0; p < p1; ++p) ps.sort_partition(p);
        const std::uint64_t b0 = ps.first_place(p0), b1 = ps.first_place(p1);
        std::size_t count = 0;
        for (std::uint64_t b = b0; b < b1; ++b) {
            if (b + ahead < b1)
                for (std::size_t k = ps.begin(b + ahead); k < ps.end(b + ahead); ++k) __builtin_prefetch(sorted[k].node, 1);
            Node* tail = head;
            if (b != 0) {
                tail = policy.sentinel(b);
                policy.init_sentinel(tail, sentinel_so_key(b));
                dir.set_sentinel(b, tail);
            }
            auto first = sorted.begin() + static_cast<std::ptrdiff_t>(ps.begin(b));
            auto last = sorted.begin() + static_cast<std::ptrdiff_t>(ps.end(b));
            std::sort(first, last, [&](const member& x, const member& y) { return policy.less(x.node, y.node); });
            Node* prev = nullptr;  // the last member linked in this bucket
            for (auto it = first; it != last; ++it) {
                Node* n = it->node;
                if constexpr (requires { policy.drop_duplicate(n, n); }) {
                    if (prev != nullptr && !policy.less(prev, n) && !policy.less(n, prev)) {
                        policy.drop_duplicate(prev, n);
                        continue;
                    }
                }
                policy.link(tail, n, false);
                tail = prev = n;
                ++count;
            }
            Node* next = successor(b);
            policy.link(tail, next, next != nullptr);
        }
        linked[c] = count;
    });
    std::size_t total = 0;
    for (const std::size_t n : linked) total += n;
    dir.reset(buckets, static_cast<std::int64_t>(total));
    return total;
}

}  // namespace ferrite::sets
