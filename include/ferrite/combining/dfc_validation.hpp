// ferrite/combining/dfc_validation.hpp: DFC never trusts the media.
//
// Opening and recovering a DFC region (dfc.hpp) reads words that a damaged or hostile pool
// controls: a fuzzer's header with threads = 2^58 made the engine size a vector from it and
// die in std::length_error, and recovery followed links wherever they pointed. Here every
// word is checked against its domain before it is used as a size, count, index, offset or
// pointer, and every check runs before the first write, so a failed open or recovery leaves
// every byte of the pool as it was. Damage throws ferrite::damaged_pool of kind
// pool_errc::damaged_object, region = the structure's kind name ("dfc_stack", "dfc_queue",
// "dfc_deque"), object "" (the catalog adds the name).
//
// Not in the papers (their recovery trusts the media). What is checked, and why each bound
// holds in every state a crash can leave (stores to one line persist in program order,
// axiom 1; the announcement's store order is in dfc.hpp):
//   header       magic; roots = the kind's root count; 1 <= threads < 2^32; 1 <= capacity
//                < 2^32 (a node index has 32 bits); 256 + threads x 192 + (capacity + 1) x 32
//                <= the region's bytes, computed so that nothing can wrap. Written once by
//                create, before its magic.
//   chunk table  first_growth_nodes < 2^32; the nonzero offsets form a prefix (growth fills
//                entries in order, each fenced before the next can exist); each entry lies
//                in the heap's arena on a granule and names a live block (or one pending
//                allocation: a crash before its confirm) of exactly the size growth asked
//                for (first << (k-1) nodes x 32, to a power of two), with first << (k-1)
//                < 2^32; no two chunks and no chunk and the region overlap. A grown
//                structure opened without a heap is the caller's mistake (ferrite::error).
//   epoch        cEpoch <= 2^62 (a phase adds 2: unreachable), so rounding up cannot wrap.
//   roots        both copies: each of the kind's root words is 0 or a node of a chunk (a
//                phase stores only nodes it allocated or read); the unused words are 0
//                (create zeroes them, nothing else writes them).
//   records      valid <= 3 (slot bit | ready bit). Per slot: the op name is 0 or one of the
//                kind's codes; the status a dfc_status; the epoch even and <= rounded cEpoch
//                + 2 (announce stamps the rounded cEpoch it reads, which the media may hold
//                one commit behind; collect stamps the phase's even cEpoch); seq <= 2^62; an
//                unused slot (name 0) has seq 0 (seq is stored after name) and a used one a
//                status other than none (BOTTOM is stored before name). The two slots'
//                effective seqs (0 if unused) are both 0 or consecutive: an announcement
//                writes active + 1 into the other slot, and the operation before it had a
//                durable slot when it returned (its combiner wrote it back).
//   links        the walk from the active roots (the structure's reachable() hook): every
//                node number is checked to be in a chunk before its node is read, and
//                visited once (a second visit is a cycle); the structure checks its shape
//                (queue: the tail is reached; deque: prev mirrors next). Nodes off the active
//                version are garbage that nothing reads before writing.
// What is not checked: elements (opaque words), responses' values, the volatile `valid`'s
// agreement with the slots (recovery recomputes it for every used record).
//
// Entry points: validate() (everything, read-only: a heap opened read-only will do) and
// owned_blocks() (the blocks a catalog object owns), exposed on the handles
// (containers/dfc_handle.hpp); the engine's open() and recover() call the same checks.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/combining/dfc_layout.hpp"
#include "ferrite/combining/dfc_node_pool.hpp"
#include "ferrite/combining/dfc_node_store.hpp"
#include "ferrite/error.hpp"

namespace ferrite::combining {

inline constexpr std::uint64_t dfc_max_epoch = std::uint64_t{1} << 62;
inline constexpr std::uint64_t dfc_max_seq = std::uint64_t{1} << 62;

namespace dfc_validation {

[[noreturn]] inline void damaged(std::string_view kind, const std::string& what) {
    throw_damaged(pool_errc::damaged_object, kind, "",
                  what + "; nothing was written (restore the pool from a copy)");
}
inline std::string num(std::uint64_t v) { return std::to_string(v); }
inline std::string node_text(std::uint64_t n) {  // chunk:index
    return num(n >> dfc_index_bits) + ":" + num(n & dfc_index_mask);
}

inline void check_region(const void* region) {
    if (region == nullptr || reinterpret_cast<std::uintptr_t>(region) % 64 != 0)
        throw usage_error("dfc: the region must be 64-byte aligned (e.g. a pool root)");
}

// The region's layout, once the header's words are known to describe `bytes` bytes.
inline dfc_region header(const void* region, std::size_t bytes, unsigned root_count, std::string_view kind) {
    check_region(region);
    const auto* h = static_cast<const dfc_header*>(region);
    if (bytes < sizeof(dfc_header) || h->magic != dfc_magic)
        damaged(kind, "no DFC structure at this region (bad magic): create one first, or the header is damaged");
    if (h->roots != root_count)
        damaged(kind, "the header says " + num(h->roots) + " root words, a " + std::string(kind) + " has " +
                          num(root_count) + ": another kind of structure, or a damaged header");
    if (h->threads == 0 || h->threads > UINT_MAX)
        damaged(kind, "the header's thread count " + num(h->threads) + " is out of range (1 to 2^32 - 1)");
    if (h->capacity == 0 || h->capacity > dfc_index_mask)
        damaged(kind, "the header's node capacity " + num(h->capacity) + " is out of range (1 to 2^32 - 1)");
    constexpr std::size_t fixed = dfc_region::fixed_lines * 64;
    // Divisions, not products: threads x 192 and (capacity + 1) x 32 are formed only once
    // they are known to fit in `bytes`.
    if (bytes < fixed || (bytes - fixed) / sizeof(dfc_thread_record) < h->threads)
        damaged(kind, "the header's " + num(h->threads) + " thread records do not fit in the region's " +
                          num(bytes) + " bytes (a damaged header, or a truncated region)");
    const std::size_t rest = bytes - fixed - h->threads * sizeof(dfc_thread_record);
    if (rest / sizeof(dfc_node) < h->capacity + 1)
        damaged(kind, "the header's " + num(h->capacity) + " nodes do not fit in the region's " + num(bytes) +
                          " bytes after its thread records (a damaged header, or a truncated region)");
    return dfc_region::at(const_cast<void*>(region), h->threads);  // written only by an engine's owner
}

// The node chunks the region's chunk table names, each checked against `heap` (null: the
// structure must never have grown).
inline dfc_chunk_map chunks(const dfc_region& r, const void* region, std::size_t bytes,
                            const alloc::buddy_heap* heap, std::string_view kind) {
    dfc_chunk_map m;
    m.count = 1;
    m.base[0] = r.nodes + 1;  // node numbers of chunk 0 start at 1: nodes[0] unused
    m.nodes[0] = r.header->capacity;
    const auto& t = *r.chunks;
    const std::uint64_t first = t.first_growth_nodes;
    if (first > dfc_index_mask)
        damaged(kind, "the chunk table's first_growth_nodes " + num(first) + " is out of range (0 to 2^32 - 1)");
    constexpr unsigned entries = dfc_max_chunks - 1;
    unsigned grown = 0;
    while (grown < entries && t.offset[grown] != 0) ++grown;
    for (unsigned j = grown + 1; j < entries; ++j)
        if (t.offset[j] != 0)
            damaged(kind, "chunk table entry " + num(j + 1) + " is set after the empty entry " + num(grown + 1) +
                              " (growth fills the table in order)");
    if (grown == 0) return m;
    if (first == 0) damaged(kind, "the chunk table names grown chunks but its first_growth_nodes is 0");
    if (heap == nullptr)
        throw error(std::string(kind) + ": this structure grew its node pool into a heap; open it with that heap "
                                        "(dfc_options::grow_from)");
    const auto& g = heap->geometry();
    const auto region_lo = reinterpret_cast<std::uintptr_t>(region);
    const auto region_hi = region_lo + bytes;
    std::array<std::uint64_t, dfc_max_chunks> block_bytes{};
    for (unsigned k = 1; k <= grown; ++k) {
        const std::string chunk = "node chunk " + num(k);
        const std::uint64_t nodes = dfc_node_store::grown_chunk_nodes(first, k);  // first < 2^32: no wrap
        if (nodes > dfc_index_mask)
            damaged(kind, chunk + " would hold " + num(nodes) + " nodes, more than a node index can number");
        const std::uint64_t off = t.offset[k - 1];
        if (off < g.arena_offset || off - g.arena_offset >= g.arena_size || (off - g.arena_offset) % alloc::granule)
            damaged(kind, chunk + "'s heap offset " + num(off) + " is not a block position of the heap");
        const void* block = heap->at(off);
        const auto st = heap->state(block);
        // A pending deallocation: a release of the last chunk that a crash cut off
        // (dfc_node_store.hpp), which recovery finishes.
        const bool releasing = k == grown && st == alloc::block_state::deallocation_pending;
        if (st != alloc::block_state::live && st != alloc::block_state::allocation_pending && !releasing)
            damaged(kind, chunk + " is not a live block of the heap (" + alloc::to_string(st) +
                              "): a wrong heap, a damaged pool, or the heap finished its recovery before this "
                              "structure was opened (open it between heap.recover() and heap.finish_recovery())");
        const std::uint64_t size = heap->block_size(block);
        const std::uint64_t want = std::bit_ceil(std::max<std::uint64_t>(nodes * sizeof(dfc_node), alloc::granule));
        if (size != want || off - g.arena_offset > g.arena_size - size)
            damaged(kind, chunk + " is a heap block of " + num(size) + " bytes; its " + num(nodes) +
                              " nodes were given a block of " + num(want));
        const auto lo = reinterpret_cast<std::uintptr_t>(block);
        if (lo < region_hi && region_lo < lo + size) damaged(kind, chunk + "'s block overlaps the structure's region");
        for (unsigned j = 1; j < k; ++j) {
            const auto other = reinterpret_cast<std::uintptr_t>(m.base[j]);
            if (lo < other + block_bytes[j] && other < lo + size)
                damaged(kind, chunk + "'s block overlaps node chunk " + num(j) + "'s");
        }
        m.base[k] = static_cast<dfc_node*>(heap->at(off));
        m.nodes[k] = nodes;
        block_bytes[k] = size;
        m.count = k + 1;
    }
    return m;
}

// cEpoch, rounded up as recovery does (an odd value: the phase before it committed).
inline std::uint64_t epoch(const dfc_region& r, std::string_view kind) {
    const std::uint64_t c = r.epoch->epoch.load(std::memory_order_relaxed);
    if (c > dfc_max_epoch) damaged(kind, "cEpoch " + num(c) + " is out of range (at most 2^62)");
    return c + (c & 1);
}

// Both root copies (`nodes`: anything with contains(n), a dfc_chunk_map or a dfc_node_store).
template <class Nodes>
void roots(const dfc_region& r, const Nodes& nodes, unsigned root_count, std::string_view kind) {
    for (unsigned copy = 0; copy < 2; ++copy)
        for (unsigned k = 0; k < dfc_max_roots; ++k) {
            const std::uint64_t w = r.roots[copy].node[k].load(std::memory_order_relaxed);
            if (k < root_count ? w != 0 && !nodes.contains(w) : w != 0)
                damaged(kind, "root word " + num(k) + " of root copy " + num(copy) + " is " +
                                  (k < root_count ? "node " + node_text(w) + ", not a node of the pool"
                                                  : num(w) + ", not 0 (an unused root word)"));
        }
}

// Every thread record (c: the rounded cEpoch; op_names: the kind's operation codes are
// 1..op_names).
inline void records(const dfc_region& r, std::uint64_t c, std::uint64_t op_names, std::string_view kind) {
    const std::uint64_t threads = r.header->threads;
    for (std::uint64_t t = 0; t < threads; ++t) {
        const auto& rec = r.threads[t];
        const std::string who = "thread record " + num(t);
        const std::uint64_t valid = rec.valid.load(std::memory_order_relaxed);
        if (valid > (dfc_ready_bit | 1)) damaged(kind, who + ": its valid word " + num(valid) + " is out of range (0 to 3)");
        std::uint64_t eff[2];
        for (unsigned s = 0; s < 2; ++s) {
            const auto& a = rec.ann[s];
            const std::string slot = who + " slot " + num(s);
            const std::uint64_t name = a.name.load(std::memory_order_relaxed);
            const std::uint64_t status = a.status.load(std::memory_order_relaxed);
            const std::uint64_t e = a.epoch.load(std::memory_order_relaxed);
            const std::uint64_t seq = a.seq.load(std::memory_order_relaxed);
            if (name > op_names)
                damaged(kind, slot + ": operation code " + num(name) + " is not one of a " + std::string(kind) +
                                  "'s (1 to " + num(op_names) + ")");
            if (status > static_cast<std::uint64_t>(dfc_status::full))
                damaged(kind, slot + ": response status " + num(status) + " is not a status (0 to 5)");
            if (e % 2 != 0 || e > c + 2)
                damaged(kind, slot + ": announcement epoch " + num(e) + " is not an even epoch up to cEpoch + 2 (" +
                                  num(c + 2) + ")");
            if (seq > dfc_max_seq) damaged(kind, slot + ": seq " + num(seq) + " is out of range (at most 2^62)");
            if (name == dfc_none_op && seq != 0)
                damaged(kind, slot + ": an unused slot (operation 0) has seq " + num(seq));
            if (name != dfc_none_op && status == static_cast<std::uint64_t>(dfc_status::none))
                damaged(kind, slot + ": a used slot has no status (an announcement stores BOTTOM first)");
            eff[s] = name == dfc_none_op ? 0 : seq;
        }
        if (!(eff[0] == 0 && eff[1] == 0) && eff[0] != eff[1] + 1 && eff[1] != eff[0] + 1)
            damaged(kind, who + ": its slots' seqs " + num(eff[0]) + " and " + num(eff[1]) +
                              " are not consecutive (each announcement takes the other slot's seq + 1)");
    }
}

// The walk from the active roots (S::reachable): `nodes` checks node numbers (contains) and
// reads nodes (node); mark(n) returns false if n was marked before (a cycle).
template <class S, class Nodes, class Mark>
void links(const dfc_region& r, const Nodes& nodes, std::uint64_t c, Mark&& mark) {
    std::uint64_t roots[dfc_max_roots] = {};
    for (unsigned k = 0; k < S::root_count; ++k) roots[k] = r.roots[(c / 2) % 2].node[k].load(std::memory_order_relaxed);
    S::reachable(
        roots, [&](std::uint64_t n) -> const dfc_node& { return nodes.node(n); },
        [&](std::uint64_t n) {
            if (!nodes.contains(n))
                damaged(S::kind_name, "a link of the active version points outside the node pool (node " +
                                          node_text(n) + ", chunk:index)");
            if (!mark(n))
                damaged(S::kind_name, "node " + node_text(n) + " is reached twice from the active roots (a cycle)");
        });
}

// Everything above, reading only: `heap` may be opened read-only and unrecovered.
template <class S>
void all(const void* region, std::size_t bytes, const alloc::buddy_heap* heap) {
    const auto r = header(region, bytes, S::root_count, S::kind_name);
    const auto m = chunks(r, region, bytes, heap, S::kind_name);
    const auto c = epoch(r, S::kind_name);
    roots(r, m, S::root_count, S::kind_name);
    records(r, c, S::op_names, S::kind_name);
    std::array<node_bitmap, dfc_max_chunks> seen;
    for (unsigned k = 0; k < m.count; ++k) seen[k].reset_all_free(m.nodes[k]);
    links<S>(r, m, c, [&](std::uint64_t n) {
        auto& b = seen[n >> dfc_index_bits];
        const std::uint64_t i = n & dfc_index_mask;
        if (!b.is_free(i)) return false;
        b.take(i);
        return true;
    });
}

// The region itself, then the heap block of every grown chunk, in chunk order (after
// checking the header and the chunk table: the same errors as validate()).
template <class S>
std::vector<const void*> owned_blocks(const void* region, std::size_t bytes, const alloc::buddy_heap* heap) {
    const auto r = header(region, bytes, S::root_count, S::kind_name);
    const auto m = chunks(r, region, bytes, heap, S::kind_name);
    std::vector<const void*> out{region};
    for (unsigned k = 1; k < m.count; ++k) out.push_back(m.base[k]);
    return out;
}

}  // namespace dfc_validation
}  // namespace ferrite::combining
