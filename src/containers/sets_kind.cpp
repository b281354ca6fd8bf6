// sets_kind.cpp: kinds 8 "durable_set" and 9 "durable_map" (ferrite/containers/sets_kind.hpp).
#include "ferrite/containers/sets_kind.hpp"

#include <string>

#include "ferrite/sets/node_check.hpp"
#include "ferrite/sets/node_store.hpp"

namespace ferrite::containers {
namespace {

std::string algorithm_name(std::uint32_t algorithm) {
    switch (algorithm) {
        case 1: return "link-free";
        case 2: return "SOFT";
        default: return "algorithm " + std::to_string(algorithm);
    }
}

std::vector<std::uint64_t> validate(const pmem::pool_ref& pool, const alloc::buddy_heap& heap,
                                    const alloc::directory_entry& e) {
    auto owned = sets::node_store::validate(pool, heap, e.anchor);
    sets::check_nodes(pool, owned, sets::node_store::recorded_shape(pool, heap, e.anchor));
    return owned;
}

void recover(const pmem::pool_ref& pool, alloc::buddy_heap& heap, const alloc::directory_entry& e) {
    const auto owned = sets::node_store::validate(pool, heap, e.anchor);  // nothing written on damage
    sets::check_nodes(pool, owned, sets::node_store::recorded_shape(pool, heap, e.anchor));
    sets::node_store::recover(pool, heap, e.anchor);
}

std::string describe(const pmem::pool_ref& pool, const alloc::buddy_heap& heap, const alloc::directory_entry& e) {
    const auto shape = sets::node_store::recorded_shape(pool, heap, e.anchor);
    const auto areas = sets::node_store::validate(pool, heap, e.anchor).size() - 1;  // less the header
    const auto slots = areas * (shape.area_bytes / sets::node_size - 1);
    std::string s = algorithm_name(shape.algorithm) + (shape.layout == 1 ? " list" : " hash table") + ", " +
                    std::to_string(shape.key_size) + "-byte keys";
    if (shape.value_size != 0) s += ", " + std::to_string(shape.value_size) + "-byte values";
    return s + ", " + std::to_string(areas) + " area(s) of " + std::to_string(shape.area_bytes / 1024) + " KiB (" +
           std::to_string(slots) + " node slots)";
}

}  // namespace

const kind_ops durable_set_kind{8, "durable_set", validate, recover, describe};
const kind_ops durable_map_kind{9, "durable_map", validate, recover, describe};

}  // namespace ferrite::containers
