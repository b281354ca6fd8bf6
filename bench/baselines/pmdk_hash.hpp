// bench/baselines/pmdk_hash.hpp: `pmdk-hash`, the transactional baseline of the durable sets
// and maps (issue 18): a chained hash map in a libpmemobj pool, every update one PMDK
// transaction (undo log), as a PMDK user would write it.
//
// Persistent layout: the root {table, buckets}; the table is one zeroed array of PMEMoid
// chain heads (pmemobj_zalloc, fixed size: no resizing); chain nodes {key, value, next} are
// allocated with pmemobj_tx_alloc, new nodes at the chain's head.
//   insert  absent: transaction {alloc node, undo-log the head slot, head = node}
//   erase   present: transaction {undo-log the predecessor's link (head slot or node.next),
//           unlink, pmemobj_tx_free(node)}
//   put     present: transaction {undo-log the value, store}; absent: as insert
//   get / contains: no transaction
// Concurrency: libpmemobj transactions give no isolation, so each bucket is guarded by a
// lock (one std::mutex per group of buckets, bucket index masked to 4096 stripes), readers
// included (an erase frees a node). Threads touching other stripes run their transactions
// in parallel (libpmemobj's allocator has per-thread arenas).
// Costs: a transaction per update (undo-log entry, its flushes and fences, the allocator's
// redo log) issued by libpmem, not counted by ferrite's counters (persistence_counted() is
// false); reads cost no persistence. Bucket = splitmix64(key) masked to a power of two.
// Not the paper's baseline (SOFT compared against log-free only): the usual "transactions"
// point of comparison of the log-free paper (several-fold slower there).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>

#include "bench/baselines/pmdk_pool.hpp"

namespace ferrite::bench::pmdk {

class hash_map {
public:
    // A fresh pool in dir sized for about `capacity` keys; `buckets` rounded up to a power
    // of two.
    hash_map(const std::filesystem::path& dir, std::uint64_t buckets, std::uint64_t capacity);
    hash_map(const hash_map&) = delete;
    hash_map& operator=(const hash_map&) = delete;

    // Keys 2i with value i for i < n, 256 per transaction (before any other operation).
    void prefill(std::uint64_t n);

    bool insert(std::uint64_t key, std::uint64_t value);  // false: present, nothing changed
    bool erase(std::uint64_t key);                        // false: absent
    bool put(std::uint64_t key, std::uint64_t value);     // true: inserted, false: assigned
    std::optional<std::uint64_t> get(std::uint64_t key);
    bool contains(std::uint64_t key) { return get(key).has_value(); }

    std::uint64_t bucket_count() const noexcept { return mask_ + 1; }
    std::uint64_t size();  // walks every chain (tests)

private:
    struct root_t;
    struct node_t;
    struct alignas(64) stripe {
        std::mutex m;
    };

    std::uint64_t bucket_of(std::uint64_t key) const noexcept;
    std::mutex& lock_of(std::uint64_t b) noexcept { return stripes_[b & (stripe_count_ - 1)].m; }
    // Link a new node at the head of bucket b inside transaction t.
    void push(transaction& t, std::uint64_t b, std::uint64_t key, std::uint64_t value);

    pool pool_;
    PMEMoid root_oid_;
    root_t* root_;
    PMEMoid* table_ = nullptr;
    std::uint64_t mask_ = 0;
    std::uint64_t stripe_count_ = 0;
    std::unique_ptr<stripe[]> stripes_;
};

}  // namespace ferrite::bench::pmdk
