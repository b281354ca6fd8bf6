// ferrite/containers/object_kinds.hpp: the registry of the kinds of named objects a pool can
// hold, and the trait through which the catalog opens one.
//
// A catalog entry (alloc::name_directory) records a kind id and an anchor word. Everything
// the catalog does without knowing the element type (list, validate, `pool check`,
// `pool info`, crash recovery) goes through the kind's registered kind_ops, found by id;
// opening an object with its type (catalog::open<T>) goes through named_kind<T>, which each
// family specializes beside its structure. Adding a family therefore touches no switch:
//   1. a header with `template <...> struct named_kind<your_type<...>>` (id, element_type,
//      make; see vector_kind.hpp for the smallest one);
//   2. a `const kind_ops` of the same id in the family's source file;
//   3. one line in src/containers/registered_kinds.cpp that lists it.
// docs/adding-a-structure.md walks through it.
//
// Ids are on the media: never renumber or reuse one. In use (registered_kinds.cpp is the
// authority, and a unit test checks that ids and names are unique):
//   1 vector, 2 dfc_stack, 3 dfc_queue, 4 dfc_deque, 5 stack, 6 queue, 7 deque,
//   8 durable_set, 9 durable_map, 10 program_image, 11 ordered_map, 12 dpfc_stack,
//   13 dpfc_queue, 14 ordered_map_k16.
// An entry whose id no registered kind has (a pool from a newer ferrite) is
// pool_error(unknown_kind), never opened as something else.
//
// Not from a paper. No persistent state of its own: the registry is a constant table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/alloc/name_directory.hpp"
#include "ferrite/pmem/pool.hpp"

namespace ferrite::containers {

// What a catalog knows of one kind without its element type. Every function receives an
// entry in use whose anchor is not 0 (the object was created), from a directory that
// validate() accepted.
struct kind_ops {
    std::uint32_t id;       // on media
    std::string_view name;  // "vector", "dfc_queue", ...: lists, errors, `pool info`
    // Read-only: validates every word of the object the entry names (its element shape
    // included) and returns the pool offsets of the heap blocks it owns. Throws
    // damaged_pool (region: the kind's name; the catalog adds the entry's name).
    std::vector<std::uint64_t> (*validate)(const pmem::pool_ref&, const alloc::buddy_heap&,
                                           const alloc::directory_entry&);
    // Crash recovery of the object, between the heap's recover() and finish_recovery(),
    // after validate(); restartable. Elements are opaque: no element type is needed.
    void (*recover)(const pmem::pool_ref&, alloc::buddy_heap&, const alloc::directory_entry&);
    // One line for `pool info` ("12 elements, capacity 16"); runs after validate().
    std::string (*describe)(const pmem::pool_ref&, const alloc::buddy_heap&, const alloc::directory_entry&);
};

// Every kind this build knows, in id order.
std::span<const kind_ops* const> registered_kinds() noexcept;
// The kind registered under `id`, or nullptr.
const kind_ops* find_kind(std::uint32_t id) noexcept;
// Its name, or "unknown(N)".
std::string kind_name(std::uint32_t id);

// What a named_kind<T>::make receives from the catalog.
struct named_context {
    const pmem::pool_ref& pool;
    alloc::buddy_heap& heap;
    std::string_view name;  // the entry's name, for errors
};

// Specialized by each family for each structure type the catalog can open:
//   static constexpr std::uint32_t id;            // a registered kind_ops' id
//   using element_type = ...;                     // checked against the entry (type_tag.hpp)
//   static T make(const named_context&, std::uint64_t& anchor, Args...);
//       anchor 0: create the object and fill in the anchor as its commit point (on
//       failure leave it 0 and nothing allocated); else open the one it names, validating
//       it first (damaged_pool, nothing written).
//   optional: static void check_shared(std::string_view name, const T&, Args...);
//       called when the object is already open in the process (e.g. DFC thread counts).
template <class T>
struct named_kind;

// The types the catalog can open: those with a named_kind specialization.
template <class T>
concept nameable = requires { named_kind<T>::id; typename named_kind<T>::element_type; };

// The named_kind of a structure made the ferrite way, with
//   static S create(const pmem::pool_ref&, Heap&, std::uint64_t& anchor, std::size_t initial_capacity, Options);
//   static S open(const pmem::pool_ref&, Heap&, std::uint64_t anchor, Options);
// where create's commit point is the anchor naming a durable header: the entry's anchor
// word serves as the structure's anchor. Derive from it: vector_kind.hpp, pfc_kinds.hpp.
template <class Structure, std::uint32_t Id, class Options>
struct named_by_anchor {
    static constexpr std::uint32_t id = Id;
    using element_type = typename Structure::value_type;
    static Structure make(const named_context& c, std::uint64_t& anchor, std::size_t initial_capacity = 16,
                          Options opts = {}) {
        return anchor == 0 ? Structure::create(c.pool, c.heap, anchor, initial_capacity, opts)
                           : Structure::open(c.pool, c.heap, anchor, opts);
    }
};

}  // namespace ferrite::containers
