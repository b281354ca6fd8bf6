// registered_kinds.cpp: the kinds of named objects this build knows (the registry of
// ferrite/containers/object_kinds.hpp). A new kind is one line here, in id order, after its
// family's kind_ops and named_kind exist. An explicit list rather than self-registering
// static objects: a static library drops an object file nothing refers to, with its
// registration, and the order of static initialisation across files is unspecified.
#include <algorithm>

#include "ferrite/containers/dfc_kinds.hpp"
#include "ferrite/containers/dpfc_kinds.hpp"
#include "ferrite/containers/ordered_map_kind.hpp"
#include "ferrite/containers/pfc_kinds.hpp"
#include "ferrite/containers/program_image.hpp"
#include "ferrite/containers/sets_kind.hpp"
#include "ferrite/containers/vector_kind.hpp"

namespace ferrite::containers {
namespace {

const kind_ops* const kinds[] = {
    &vector_kind,     // 1
    &dfc_stack_kind,  // 2
    &dfc_queue_kind,  // 3
    &dfc_deque_kind,  // 4
    &stack_kind,      // 5
    &queue_kind,      // 6
    &deque_kind,      // 7
    &durable_set_kind,  // 8
    &durable_map_kind,  // 9
    &program_image_kind,  // 10
    &ordered_map_kind,    // 11
    &dpfc_stack_kind,     // 12
    &dpfc_queue_kind,     // 13
    &ordered_map_k16_kind,  // 14
};

}  // namespace

std::span<const kind_ops* const> registered_kinds() noexcept { return kinds; }

const kind_ops* find_kind(std::uint32_t id) noexcept {
    const auto it = std::find_if(std::begin(kinds), std::end(kinds), [id](const kind_ops* k) { return k->id == id; });
    return it == std::end(kinds) ? nullptr : *it;
}

std::string kind_name(std::uint32_t id) {
    if (const auto* k = find_kind(id)) return std::string(k->name);
    return "unknown(" + std::to_string(id) + ")";
}

}  // namespace ferrite::containers
