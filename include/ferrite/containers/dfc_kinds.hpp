// ferrite/containers/dfc_kinds.hpp: the detectable flat-combining stack, queue and deque as
// named objects of a catalog (kinds 2 "dfc_stack", 3 "dfc_queue", 4 "dfc_deque"; the
// registry: object_kinds.hpp).
//
//   auto jobs = names.open<ferrite::dfc_queue<std::uint64_t>>("jobs", /*threads*/ 8);
//   // or names.open_dfc_queue<std::uint64_t>("jobs", 8), the same call
//
// Arguments: thread ids (0..threads-1), the nodes of the first region (default 4096; the
// node pool grows into the heap), dfc_options. An existing structure keeps the thread count
// it was created with (->threads()): asking for fewer opens it, asking for more is a
// usage_error that changes nothing (those thread ids do not exist).
//
// Crash consistency of make(): the structure lives in a heap block, allocated (pending),
// formatted by create() (durable: its magic is written back last), then named by the
// entry's anchor (publish_block: the commit point) and confirmed. A crash before the
// anchor leaves a pending block that the heap's recovery frees; after it, the kind's
// recover (src/containers/dfc_kinds.cpp) confirms the block and runs the structure's
// recovery. A failure before the anchor gives the block back at once.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ferrite/containers/concepts.hpp"
#include "ferrite/containers/dfc_checks.hpp"
#include "ferrite/containers/dfc_deque.hpp"
#include "ferrite/containers/dfc_queue.hpp"
#include "ferrite/containers/dfc_stack.hpp"
#include "ferrite/containers/object_kinds.hpp"
#include "ferrite/containers/publish.hpp"

namespace ferrite::containers {

extern const kind_ops dfc_stack_kind;  // src/containers/dfc_kinds.cpp
extern const kind_ops dfc_queue_kind;
extern const kind_ops dfc_deque_kind;

// Throws usage_error if no thread id or no node is asked for structure `name`.
void check_dfc_arguments(std::string_view name, unsigned threads, std::uint64_t nodes);
// Throws usage_error if `asked` thread ids exceed the `created` ones of structure `name`.
void check_dfc_threads(std::string_view name, std::uint64_t created, unsigned asked);

template <class C, std::uint32_t Id>
struct named_dfc {
    static constexpr std::uint32_t id = Id;
    using element_type = typename C::value_type;
    static C make(const named_context& c, std::uint64_t& anchor, unsigned threads, std::uint64_t initial_nodes = 4096,
                  combining::dfc_options o = {}) {
        check_dfc_arguments(c.name, threads, initial_nodes);
        o.grow_from = &c.heap;
        o.in_pool = c.pool;  // a handle kept past the pool's close refuses, naming the pool
        if (anchor != 0) {
            const auto span = dfc_region_at<C>(c.pool, c.heap, anchor);  // validated anchor
            check_dfc_threads(c.name, static_cast<const combining::dfc_header*>(span.region)->threads, threads);
            return C::open(const_cast<void*>(span.region), span.bytes, o);
        }
        const std::size_t bytes = C::required_bytes(threads, initial_nodes);
        void* region = c.heap.allocate(bytes);  // pending until the anchor names it
        try {
            C made = C::create(region, bytes, threads, o);  // durable before the anchor
            publish_block(c.pool, c.heap, anchor, region);
            return made;
        } catch (...) {
            if (anchor == 0) discard_pending_block(c.heap, region);  // nothing names it
            throw;
        }
    }
    static void check_shared(std::string_view name, const C& open, unsigned threads, std::uint64_t initial_nodes = 4096,
                             const combining::dfc_options& = {}) {
        check_dfc_arguments(name, threads, initial_nodes);
        check_dfc_threads(name, open.threads(), threads);
    }
};

template <class T>
struct named_kind<dfc_stack<T>> : named_dfc<dfc_stack<T>, 2> {};
template <class T>
struct named_kind<dfc_queue<T>> : named_dfc<dfc_queue<T>, 3> {};
template <class T>
struct named_kind<dfc_deque<T>> : named_dfc<dfc_deque<T>, 4> {};

static_assert(detectable_structure<dfc_stack<std::uint64_t>>);
static_assert(detectable_structure<dfc_queue<std::uint64_t>>);
static_assert(detectable_structure<dfc_deque<double>>);

}  // namespace ferrite::containers
