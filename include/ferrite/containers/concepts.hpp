// ferrite/containers/concepts.hpp: what each kind of ferrite structure promises, as C++20
// concepts, so that a contract is checked by the compiler instead of kept in prose.
//
//   persistent_structure  lives in a pool, reachable from a catalog name: a registered
//                         named_kind (object_kinds.hpp), movable (the catalog holds it in
//                         a shared_ptr), a value_type; recovery is the kind's, run by
//                         catalog::recover_pool, never by the user
//   sequence_structure    a persistent_structure with a size and a snapshot of its elements
//                         for single-threaded use (the PFC vector, stack, queue, deque)
//   detectable_structure  a persistent_structure with fixed thread ids whose recover(tid)
//                         says what became of that thread's latest operation (the DFC
//                         stack, queue and deque: dfc_handle.hpp)
//   durable_set           insert / erase / contains by key, each durable when it returns
//   durable_map           insert (absent only) / put (upsert) / get / erase by key
//   ordered_map           a durable_map with scan(from, count, out) in key order
// The set and map contracts: durable_set and durable_map (durable_map.hpp) meet them, and
// ferrite::ordered_map (ordered_map.hpp) the ordered one, with buffered durability. Each structure's header ends with the static_asserts it passes; a
// new family adds its own, and joins tests/unit/containers/conformance_test.cpp.
//
// Not from a paper; nothing persistent.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include "ferrite/combining/dfc_types.hpp"
#include "ferrite/containers/object_kinds.hpp"

namespace ferrite::containers {

template <class S>
concept persistent_structure = nameable<S> && std::move_constructible<S> && requires { typename S::value_type; };

template <class S>
concept sequence_structure = persistent_structure<S> && requires(S& s) {
    { s.size() } -> std::convertible_to<std::uint64_t>;
    { s.empty() } -> std::same_as<bool>;
};

template <class S>
concept detectable_structure = persistent_structure<S> && requires(S& s, const S& cs, unsigned tid) {
    { cs.threads() } -> std::same_as<unsigned>;
    { s.recover(tid) } -> std::same_as<combining::dfc_recovered_op>;
    s.release(tid);
};

template <class S>
concept durable_set = requires(S& s, const typename S::key_type& k) {
    { s.insert(k) } -> std::same_as<bool>;  // false: already present
    { s.erase(k) } -> std::same_as<bool>;   // false: absent
    { s.contains(k) } -> std::same_as<bool>;
};

template <class M>
concept durable_map = requires(M& m, const typename M::key_type& k, const typename M::mapped_type& v) {
    { m.insert(k, v) } -> std::same_as<bool>;  // false: the key was present (nothing changed)
    m.put(k, v);                               // insert or replace
    { m.get(k) } -> std::same_as<std::optional<typename M::mapped_type>>;
    { m.erase(k) } -> std::same_as<bool>;
};

template <class M>
concept ordered_map = durable_map<M> &&
                      requires(M& m, const typename M::key_type& k, std::size_t n,
                               std::vector<std::pair<typename M::key_type, typename M::mapped_type>>& out) {
                          { m.scan(k, n, out) } -> std::convertible_to<std::size_t>;  // pairs appended
                      };

}  // namespace ferrite::containers
