// crash/containers/deque_target.cpp: crash targets deque-pfc, deque-fpfc, queue-pfc and
// queue-fpfc (the structures on persistent_deque_core.hpp).
//
// Workload: each thread runs a seeded mix on a structure that starts with capacity 2, so
// growth (and the heap's confirm protocol) and wrap-around of the ring happen all the time,
// in a pool whose heap is a ferrite::alloc::buddy_heap:
//   deque: push_back / push_front (unique values), pop_back / pop_front, front / back, size,
//          reserve (up to 63: more growth);
//   queue: push (unique values), pop, front, size, reserve.
// Trace, recovery and checker: those of every container target (container_target.hpp), with
// a std::deque as the specification; the heap must hold exactly the header and the ring.
#include <deque>

#include "container_target.hpp"
#include "ferrite/containers/deque.hpp"
#include "ferrite/containers/queue.hpp"
#include "targets.hpp"

namespace ferrite::crash {
namespace {

using namespace container_check;
using containers::deque_op;

struct deque_entry {
    deque_op op{};
    element_type value = 0;
    std::uint64_t n = 0;
    bool ok = false;
    element_type out_value = 0;
    std::uint64_t out_n = 0;

    deque_entry() = default;
    deque_entry(const containers::deque_request<element_type>& r, const containers::deque_response<element_type>& s)
        : op(r.op), value(r.value), n(r.n), ok(s.ok), out_value(s.value), out_n(s.n) {}
};

// A sequential deque: the specification the trace is checked against.
struct deque_model {
    std::deque<element_type> items;
    // Applies e; false if e's recorded response is not what the specification returns.
    bool apply(const deque_entry& e) {
        auto& d = items;
        const auto take = [&](bool front) {
            if (d.empty()) return !e.ok;
            const auto x = front ? d.front() : d.back();
            if (front) d.pop_front(); else d.pop_back();
            return e.ok && e.out_value == x;
        };
        switch (e.op) {
            case deque_op::push_back: if (e.ok) d.push_back(e.value); return true;  // may fail: heap
            case deque_op::push_front: if (e.ok) d.push_front(e.value); return true;
            case deque_op::pop_back: return take(false);
            case deque_op::pop_front: return take(true);
            case deque_op::front: return d.empty() ? !e.ok : e.ok && e.out_value == d.front();
            case deque_op::back: return d.empty() ? !e.ok : e.ok && e.out_value == d.back();
            case deque_op::size: return e.out_n == d.size();
            case deque_op::reserve: return !e.ok || e.out_n >= e.n;
        }
        return false;
    }
};

// What the deque and the queue targets share: everything but the operation mix.
template <class Structure>
struct deque_spec_base {
    using entry = deque_entry;
    using model = deque_model;
    using structure = Structure;

    static structure create(pmem::pool& p, heap_type& h, std::uint64_t& anchor, recording_trace<entry> t) {
        return structure::create(p, h, anchor, 2, {}, t);
    }
    static structure open(pmem::pool& p, heap_type& h, std::uint64_t anchor, recording_trace<entry> t = {}) {
        return structure::open(p, h, anchor, {}, t);
    }
    static std::uint64_t capacity(pmem::pool& image, std::uint64_t anchor) {
        return reinterpret_cast<const containers::deque_header*>(image.base() + anchor)->capacity;
    }
    static std::vector<element_type> contents(const structure& d) { return d.unsynchronized_contents(); }
    static std::vector<const std::byte*> blocks(pmem::pool& image, std::uint64_t anchor) {
        const auto* h = reinterpret_cast<const containers::deque_header*>(image.base() + anchor);
        std::vector<const std::byte*> out{reinterpret_cast<const std::byte*>(h)};
        if (h->data != 0) out.push_back(image.base() + h->data);
        return out;
    }
};

template <class Selector>
struct deque_spec : deque_spec_base<ferrite::deque<element_type, heap_type, Selector, recording_trace<deque_entry>>> {
    static constexpr const char* name = "deque";
    template <class S>
    static void push(S& d, element_type v) { (void)d.push_back(v); }
    template <class S>
    static void pop(S& d) { (void)d.pop_back(); }
    template <class S>
    static void run_op(S& d, unsigned tid, std::uint64_t i, std::uint64_t r) {
        switch (r % 13) {
            case 0: case 1: case 2: (void)d.push_back(unique_value(tid, i)); break;
            case 3: case 4: case 5: (void)d.push_front(unique_value(tid, i)); break;
            case 6: case 7: (void)d.pop_back(); break;
            case 8: case 9: (void)d.pop_front(); break;
            case 10: (void)(r >> 8 & 1 ? d.front() : d.back()); break;
            case 11: (void)d.size(); break;
            default: (void)d.reserve(r >> 8 & 63); break;
        }
    }
};

template <class Selector>
struct queue_spec : deque_spec_base<ferrite::queue<element_type, heap_type, Selector, recording_trace<deque_entry>>> {
    static constexpr const char* name = "queue";
    template <class S>
    static void push(S& q, element_type v) { (void)q.push(v); }
    template <class S>
    static void pop(S& q) { (void)q.pop(); }
    template <class S>
    static void run_op(S& q, unsigned tid, std::uint64_t i, std::uint64_t r) {
        switch (r % 11) {
            case 0: case 1: case 2: case 3: case 4: (void)q.push(unique_value(tid, i)); break;
            case 5: case 6: case 7: (void)q.pop(); break;
            case 8: (void)q.front(); break;
            case 9: (void)q.size(); break;
            default: (void)q.reserve(r >> 8 & 63); break;
        }
    }
};

}  // namespace

// Mutation scope: the containers' code; the heap's sites are answered for by `alloc` and
// `vector-*` (the heap's rollback fence, undo_log.cpp:110, is killed there within 100 crash
// points and survived 2,000 in queue-fpfc, whose workload rarely crashes inside a rollback).
void register_deque_targets(sim::target_registry& r) {
    r.add(make_target<deque_spec<containers::use_pfc>>(
        "deque-pfc", "ferrite::deque on PFC (ring buffer): pushes/pops at both ends, front/back/size/reserve from capacity 2", {"include/ferrite/containers/"}));
    r.add(make_target<deque_spec<containers::use_fpfc>>(
        "deque-fpfc", "ferrite::deque on FPFC (ring buffer): pushes/pops at both ends, front/back/size/reserve from capacity 2", {"include/ferrite/containers/"}));
    r.add(make_target<queue_spec<containers::use_pfc>>(
        "queue-pfc", "ferrite::queue on PFC (deque core): push/pop/front/size/reserve from capacity 2, buddy heap", {"include/ferrite/containers/"}));
    r.add(make_target<queue_spec<containers::use_fpfc>>(
        "queue-fpfc", "ferrite::queue on FPFC (deque core): push/pop/front/size/reserve from capacity 2, buddy heap", {"include/ferrite/containers/"}));
}

}  // namespace ferrite::crash
