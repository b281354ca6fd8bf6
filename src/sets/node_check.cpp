// node_check.cpp: the durable sets' node slots validated without K and V (sets/node_check.hpp).
#include "ferrite/sets/node_check.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>

#include "ferrite/error.hpp"
#include "ferrite/sets/linkfree_node.hpp"
#include "ferrite/sets/soft_pnode.hpp"

namespace ferrite::sets {
namespace {

constexpr std::uint32_t linkfree_algorithm = 1;  // linkfree_table::algorithm_id

// A SOFT PNode's superseded_by names a node slot of this set: in one of its areas, on a
// line boundary, past the area's header line. Integer comparisons only.
bool is_slot(const std::vector<std::uint64_t>& areas, std::uint64_t area_bytes, std::uint64_t at) {
    auto it = std::upper_bound(areas.begin(), areas.end(), at);
    if (it == areas.begin()) return false;
    const std::uint64_t within = at - *--it;
    return within >= node_size && within < area_bytes && within % node_size == 0;
}

void check_soft(const std::byte* base, const std::vector<std::uint64_t>& areas, std::uint64_t area_bytes) {
    for (const auto a : areas)
        for (std::uint64_t at = a + node_size; at < a + area_bytes; at += node_size) {
            const auto f = soft::read_flags(reinterpret_cast<const soft::pnode*>(base + at));
            soft::checked_supersede_target(f, at, [&](std::uint64_t off) { return is_slot(areas, area_bytes, off); });
        }
}

void check_linkfree(const std::byte* base, const std::vector<std::uint64_t>& areas, std::uint64_t area_bytes,
                    std::uint32_t key_size) {
    std::unordered_map<std::string_view, std::uint64_t> members;  // key bytes -> the member's pool offset
    for (const auto a : areas)
        for (std::uint64_t at = a + node_size, index = 0; at < a + area_bytes; at += node_size, ++index) {
            const std::byte* n = base + at;
            const auto v1 = static_cast<std::uint8_t>(n[0]), v2 = static_cast<std::uint8_t>(n[1]);
            check_validity_bits(v1, v2, a, index);
            std::uint64_t next = 0;
            std::memcpy(&next, n + linkfree_next_offset, sizeof next);
            if (v1 != v2 || (next & linkfree_mark) != 0) continue;  // not a member
            const std::string_view key(reinterpret_cast<const char*>(n + linkfree_key_offset), key_size);
            if (const auto [it, fresh] = members.emplace(key, at); !fresh) duplicate_members(it->second, at);
        }
}

}  // namespace

void check_nodes(const pmem::pool_ref& pool, const std::vector<std::uint64_t>& owned, const node_store_shape& shape) {
    if (owned.empty()) return;
    std::vector<std::uint64_t> areas(owned.begin() + 1, owned.end());  // less the header block
    std::sort(areas.begin(), areas.end());
    const std::byte* base = pool.base();
    if (shape.algorithm == soft::algorithm_id) check_soft(base, areas, shape.area_bytes);
    else if (shape.algorithm == linkfree_algorithm) check_linkfree(base, areas, shape.area_bytes, shape.key_size);
}

}  // namespace ferrite::sets
