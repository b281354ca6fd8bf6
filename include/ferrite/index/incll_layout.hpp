// ferrite/index/incll_layout.hpp: what the durable tree (durable_tree.hpp) keeps in its pool
// region, line by line. Offsets are from the region's start, so the region may be mapped
// anywhere.
//
//   line 0   geometry: magic, layout version, region bytes, shards, log entries per shard,
//            arena offset, arena nodes (written once by create, read-only after)
//   line 1   commit line: durable_epoch, then two commit slots {root offset, nodes allocated,
//            state epoch}; the epoch E commit writes slot[E & 1] and then durable_epoch := E
//            (one line: the media holds a prefix of these stores in program order, so a
//            durable_epoch of E implies slot[E & 1] of E; slot[(E-1) & 1] is not touched),
//            then `pending`: the epoch whose undo words nodes not yet lazily recovered still
//            hold (incll_lazy.hpp; 0: none; a layout-1 region written before lazy recovery
//            has 0 there, its former spare word)
//   then     the external undo logs: `shards` logs of `log_entries` entries of 384 bytes
//   then     the node arena: `arena_nodes` nodes of 320 bytes (leaves and interior nodes),
//            allocated by a bump counter that each commit records
//
// A log entry is one header line {epoch, node offset, checksum} and the node's five lines as
// they were before the epoch's first rewrite of the node; the checksum (FNV-1a over the
// epoch, the offset and the image) tells a whole entry from a torn one.
//
// The key width is the layout version: 1 is the tree of 8-byte keys (above), 2 the tree of
// 16-byte keys (key128), whose nodes are 448 bytes (nodes.hpp) and log entries 512 (one header
// line and the node's seven lines); everything else is the same. Open checks the version
// against the key type it is asked for before it writes anything, so a region made for one
// width opened as the other is refused with a message that names both (incll_recovery.cpp).
// Ids are never reused: a later change of either layout takes a new version.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ferrite/index/nodes.hpp"

namespace ferrite::index::incll_layout {

inline constexpr std::uint64_t magic = 0x4c4c434e49727266ull;  // "frrINCLL"
inline constexpr std::uint64_t layout_version = 1;      // 8-byte keys
inline constexpr std::uint64_t layout_version_k16 = 2;  // 16-byte keys (key128)
inline constexpr std::uint64_t node_bytes = 320;        // 8-byte keys
static_assert(sizeof(leaf) == node_bytes && sizeof(interior) == node_bytes);
static_assert(sizeof(leaf16) == 448 && sizeof(interior16) == 448);

template <class K>
inline constexpr std::uint64_t version_of = sizeof(K) == 8 ? layout_version : layout_version_k16;
// The key width a layout version stands for (0: none).
constexpr unsigned key_bytes_of_version(std::uint64_t v) noexcept { return v == layout_version ? 8 : v == layout_version_k16 ? 16 : 0; }

struct geometry {
    std::uint64_t magic;
    std::uint64_t version;
    std::uint64_t region_bytes;
    std::uint64_t shards;
    std::uint64_t log_entries;
    std::uint64_t logs_offset;
    std::uint64_t arena_offset;
    std::uint64_t arena_nodes;
};
static_assert(sizeof(geometry) == 64);

struct commit_slot {
    std::uint64_t root;         // node offset of the root
    std::uint64_t allocated;    // arena nodes in use
    std::uint64_t state_epoch;  // the epoch whose end the tree state is
};
struct alignas(64) commit_line {
    std::uint64_t durable_epoch;
    commit_slot slots[2];
    std::uint64_t pending;  // lazy recovery: the epoch whose in-line undo words some nodes still hold (0: none)
};
static_assert(sizeof(commit_line) == 64);

template <class K>
struct alignas(64) basic_log_entry {
    std::uint64_t epoch;
    std::uint64_t node;  // node offset
    std::uint64_t checksum;
    std::uint64_t spare[5];
    std::uint64_t image[node_bytes_of<K> / 8];
};
using log_entry = basic_log_entry<std::uint64_t>;
static_assert(sizeof(log_entry) == 384 && sizeof(basic_log_entry<key128>) == 512);

inline constexpr std::uint64_t header_bytes = 128;  // geometry + commit line

template <class K = std::uint64_t>
constexpr std::uint64_t bytes_for(std::uint64_t shards, std::uint64_t log_entries, std::uint64_t arena_nodes) noexcept {
    return header_bytes + shards * log_entries * sizeof(basic_log_entry<K>) + arena_nodes * node_bytes_of<K>;
}

}  // namespace ferrite::index::incll_layout
