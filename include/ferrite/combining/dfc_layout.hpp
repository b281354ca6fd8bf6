// ferrite/combining/dfc_layout.hpp: the persistent layout of a DFC object (see dfc.hpp).
//
// One region, 64-byte aligned, cache lines in this order:
//
//   line 0          header: magic, version, threads N, node capacity, root count
//   line 1          cEpoch, root copy 0, root copy 1 (up to 3 root words each: top / head,
//                   tail). One line, so the commit's single write-back of cEpoch also
//                   persists the new roots: stores to one line persist in program order
//                   (axiom 1), and the roots are stored before cEpoch. The papers write the
//                   roots back separately (one pwb more per phase).
//   lines 2-3       the node chunk table: nodes in the first grown chunk, and the heap
//                   offsets of up to 15 grown chunks (dfc_node_store.hpp)
//   3 lines per thread: valid | ann[0] | ann[1]
//   nodes 1..capacity, 32 bytes each (dfc_node_pool.hpp)
//
// Announcement fields live in one line so that stores to them persist in program order
// (axiom 1): the combiner writes `epoch` before `status`, so a durable response implies a
// durable collection epoch (003:L299); the owner writes `seq` last, so a durable `seq`
// implies a durable announcement.
//
// Nothing here is trusted when read back: the domain of every word, and why a crash cannot
// leave a word outside it, is in dfc_validation.hpp, which open and recovery run first.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "ferrite/combining/dfc_node_pool.hpp"
#include "ferrite/pmem/flow.hpp"

namespace ferrite::combining {

// The `val` of the papers, split into a status and a value so that BOTTOM is distinct from
// every value (defect #2: 0 is a legal value and the initial contents of the pool).
enum class dfc_status : std::uint64_t {
    none = 0,    // never announced (zero-filled memory)
    bottom = 1,  // announced, no response yet (the papers' ⊥)
    ack = 2,     // a push/enqueue took effect
    empty = 3,   // a pop/dequeue found the structure empty
    value = 4,   // a pop/dequeue returned `value`
    full = 5,    // a push found the node pool exhausted (no effect)
};

// What a combiner answered an operation.
struct dfc_response {
    dfc_status status = dfc_status::none;
    std::uint64_t value = 0;
    friend bool operator==(const dfc_response&, const dfc_response&) = default;
};

inline constexpr std::uint64_t dfc_magic = 0x33434644'54495246ull;  // "FRITDFC3" (growable node pool)
inline constexpr std::uint64_t dfc_none_op = 0;                    // announcement name: none
inline constexpr unsigned dfc_max_roots = 3;

struct alignas(64) dfc_header {  // persistent, written once at create
    std::uint64_t magic;
    std::uint64_t threads;
    std::uint64_t capacity;
    std::uint64_t roots;
};

struct dfc_roots {  // persistent: one copy of the root words
    std::atomic<std::uint64_t> node[dfc_max_roots];
};

struct alignas(64) dfc_epoch_line {  // persistent; the waiters spin on `epoch`
    std::atomic<std::uint64_t> epoch FERRITE_FLOW_SENTINEL;
    dfc_roots roots[2];
};

struct alignas(64) dfc_announcement {  // persistent, one line
    std::atomic<std::uint64_t> status;  // dfc_status
    std::atomic<std::uint64_t> value;
    std::atomic<std::uint64_t> epoch;   // the phase that collected it (or the announce epoch)
    std::atomic<std::uint64_t> param;
    std::atomic<std::uint64_t> name;    // structure's operation code; 0 = none
    std::atomic<std::uint64_t> seq;     // per-thread operation number, from 1 (defect #10)
};

inline constexpr unsigned dfc_max_chunks = 16;  // chunk 0 (in the region) + 15 grown ones

struct alignas(64) dfc_chunk_table {  // persistent; written at create and once per growth
    std::uint64_t first_growth_nodes;             // nodes of chunk 1 (chunk k: << (k-1)); 0 = never grows
    std::uint64_t offset[dfc_max_chunks - 1];     // heap offset of chunk k at [k-1]; 0 = not yet
};

// valid: bit 0 = the active slot (LSB), bit 1 = ready to be collected (the papers' MSB).
// Never written back: recovery recomputes it from the slots' seqs (dfc.hpp). It keeps its
// own line so that the owner's store does not pull an announcement line away from a
// combiner.
inline constexpr std::uint64_t dfc_ready_bit = 2;

struct alignas(64) dfc_thread_record {  // persistent
    std::atomic<std::uint64_t> valid;
    std::uint64_t pad[7];
    dfc_announcement ann[2];
};

static_assert(sizeof(dfc_header) == 64 && sizeof(dfc_epoch_line) == 64 && sizeof(dfc_chunk_table) == 128);
static_assert(sizeof(dfc_announcement) == 64 && sizeof(dfc_thread_record) == 192);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

struct dfc_region {
    static constexpr std::size_t fixed_lines = 4;  // header, epoch line, chunk table (2)
    dfc_header* header;
    dfc_epoch_line* epoch;
    dfc_roots* roots;  // [2], inside the epoch line
    dfc_chunk_table* chunks;
    dfc_thread_record* threads;
    dfc_node* nodes;   // nodes[0] unused: node numbers start at 1

    static constexpr std::size_t bytes(std::uint64_t threads, std::uint64_t capacity) noexcept {
        const std::size_t fixed = fixed_lines * 64 + threads * sizeof(dfc_thread_record);
        return fixed + (capacity + 1) * sizeof(dfc_node);
    }
    // Capacity that fits in `bytes` for `threads` threads (0 if not even the fixed part fits).
    static constexpr std::uint64_t capacity_for(std::size_t bytes, std::uint64_t threads) noexcept {
        const std::size_t fixed = fixed_lines * 64 + threads * sizeof(dfc_thread_record) + sizeof(dfc_node);
        return bytes < fixed ? 0 : (bytes - fixed) / sizeof(dfc_node);
    }
    static dfc_region at(void* base, std::uint64_t threads) noexcept {
        auto* b = static_cast<std::byte*>(base);
        auto* epoch = reinterpret_cast<dfc_epoch_line*>(b + 64);
        return {reinterpret_cast<dfc_header*>(b), epoch, epoch->roots,
                reinterpret_cast<dfc_chunk_table*>(b + 128),
                reinterpret_cast<dfc_thread_record*>(b + fixed_lines * 64),
                reinterpret_cast<dfc_node*>(b + fixed_lines * 64 + threads * sizeof(dfc_thread_record))};
    }
};

}  // namespace ferrite::combining
