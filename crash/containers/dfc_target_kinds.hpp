// crash/containers/dfc_target_kinds.hpp: the three DFC structures as the crash targets see them
// (dfc_targets.cpp): each Kind names the container (with the recording trace), how a thread
// runs operation `name`, the sequential model that predicts its response, the contents in
// model order and the structure's own invariant check.
//
// The model is a std::deque for all three (stack: push_back / pop_back; queue: push_back /
// pop_front; deque: both ends). Responses are compared as dfc_response: a push answers ack
// (or full when the node pool is exhausted, which the checkers treat as "no effect"), a pop
// value or empty. Every kind's push operations have odd names (is_push), so a checker can
// tell whether a recovered param must be the pushed value.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>

#include "dfc_trace.hpp"
#include "ferrite/containers/dfc_deque.hpp"
#include "ferrite/containers/dfc_queue.hpp"
#include "ferrite/containers/dfc_stack.hpp"
#include "ferrite/sim/rng.hpp"
#include "ferrite/sync/wait_policy.hpp"

namespace ferrite::crash::dfc_check {

using combining::dfc_response;
using combining::dfc_status;

using model = std::deque<std::uint64_t>;
inline dfc_response model_push_back(model& m, std::uint64_t v) { m.push_back(v); return {dfc_status::ack, 0}; }
inline dfc_response model_push_front(model& m, std::uint64_t v) { m.push_front(v); return {dfc_status::ack, 0}; }
inline dfc_response model_pop_back(model& m) {
    if (m.empty()) return {dfc_status::empty, 0};
    const auto v = m.back();
    m.pop_back();
    return {dfc_status::value, v};
}
inline dfc_response model_pop_front(model& m) {
    if (m.empty()) return {dfc_status::empty, 0};
    const auto v = m.front();
    m.pop_front();
    return {dfc_status::value, v};
}
inline dfc_response ack_or_full(bool ok) { return {ok ? dfc_status::ack : dfc_status::full, 0}; }
inline dfc_response value_or_empty(const std::optional<std::uint64_t>& v) {
    return v ? dfc_response{dfc_status::value, *v} : dfc_response{dfc_status::empty, 0};
}

// Structure kinds: the container, how a thread picks operations, the sequential model.
// The stack and queue kinds over any container with their operations (DFC's, and the
// detectable PFC's of dpfc_target.cpp): Stack::push_op, push(tid, v), pop(tid),
// unsynchronized_contents() top first; Queue::enqueue_op, enqueue, dequeue, front first.
template <class Stack>
struct basic_stack_kind {
    using type = Stack;
    static constexpr std::uint64_t names = 2;
    static dfc_response run(type& s, unsigned tid, std::uint64_t name, std::uint64_t v) {
        return name == type::push_op ? ack_or_full(s.push(tid, v)) : value_or_empty(s.pop(tid));
    }
    static dfc_response apply(model& m, std::uint64_t name, std::uint64_t v) {
        return name == type::push_op ? model_push_back(m, v) : model_pop_back(m);
    }
    static model contents(const type& s) {
        auto c = s.unsynchronized_contents();  // top first
        return model(c.rbegin(), c.rend());
    }
    static std::string check(const type&) { return {}; }
};

template <class Queue>
struct basic_queue_kind {
    using type = Queue;
    static constexpr std::uint64_t names = 2;
    static dfc_response run(type& s, unsigned tid, std::uint64_t name, std::uint64_t v) {
        return name == type::enqueue_op ? ack_or_full(s.enqueue(tid, v)) : value_or_empty(s.dequeue(tid));
    }
    static dfc_response apply(model& m, std::uint64_t name, std::uint64_t v) {
        return name == type::enqueue_op ? model_push_back(m, v) : model_pop_front(m);
    }
    static model contents(const type& s) {
        auto c = s.unsynchronized_contents();
        return model(c.begin(), c.end());
    }
    static std::string check(const type&) { return {}; }
};

using stack_kind = basic_stack_kind<dfc_stack<std::uint64_t, sync::spin_then_futex<>, recording_trace>>;
using queue_kind = basic_queue_kind<dfc_queue<std::uint64_t, sync::spin_then_futex<>, recording_trace>>;

struct deque_kind {
    using type = dfc_deque<std::uint64_t, sync::spin_then_futex<>, recording_trace>;
    static constexpr std::uint64_t names = 4;
    static dfc_response run(type& s, unsigned tid, std::uint64_t name, std::uint64_t v) {
        switch (name) {
            case type::push_front_op: return ack_or_full(s.push_front(tid, v));
            case type::pop_front_op: return value_or_empty(s.pop_front(tid));
            case type::push_back_op: return ack_or_full(s.push_back(tid, v));
            default: return value_or_empty(s.pop_back(tid));
        }
    }
    static dfc_response apply(model& m, std::uint64_t name, std::uint64_t v) {
        switch (name) {
            case type::push_front_op: return model_push_front(m, v);
            case type::pop_front_op: return model_pop_front(m);
            case type::push_back_op: return model_push_back(m, v);
            default: return model_pop_back(m);
        }
    }
    static model contents(const type& s) {
        auto c = s.unsynchronized_contents();
        return model(c.begin(), c.end());
    }
    static std::string check(const type& s) { return s.unsynchronized_check(); }
};

inline bool is_push(std::uint64_t name) { return name % 2 == 1; }  // every kind: odd = push

// Operation i of thread tid in a run of `seed`: (name, value), slightly more pushes than
// pops so the structure is usually non-empty (names 1..names, odd = a push: is_push).
inline std::pair<std::uint64_t, std::uint64_t> seeded_op(std::uint64_t seed, std::uint64_t names, unsigned tid,
                                                         std::uint64_t i) {
    const auto r = sim::mix(seed, (std::uint64_t{tid} << 40) ^ i);
    std::uint64_t name = 1 + (r % names);
    if (!is_push(name) && (r >> 20) % 8 == 0) name -= 1;
    return {name, std::uint64_t{tid} << 32 | i};
}

inline std::string op_text(unsigned t, std::uint64_t seq) {
    return "thread " + std::to_string(t) + " op seq " + std::to_string(seq);
}

}  // namespace ferrite::crash::dfc_check
