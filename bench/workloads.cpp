// bench/workloads.cpp: the workload table and the per-thread operation streams.
#include "bench/workloads.hpp"

#include <algorithm>

namespace ferrite::bench {

const std::vector<workload>& workloads() {
    static const std::vector<workload> all = {
        {"push-pop", "each thread alternates push_back and pop_back (thesis Fig. 6.1)",
         {op::push_back, op::pop_back}, 0, pattern::push_pop},
        {"swap-push-pop", "push_back, swap, pop_back, swap, ...: half swaps of random indices, half push-pop",
         {op::push_back, op::pop_back, op::swap}, default_initial_size, pattern::swap_push_pop},
        {"swap", "pure swap of two random indices",
         {op::swap}, default_initial_size, pattern::swap},
        {"get-push-pop", "push_back, get, pop_back, get, ...: half gets of a random index, half push-pop",
         {op::push_back, op::pop_back, op::get}, default_initial_size, pattern::get_push_pop},
        {"get", "pure get of a random index",
         {op::get}, default_initial_size, pattern::get},
        {"rand-op", "push_back or pop_back at random, 50/50",
         {op::push_back, op::pop_back}, 0, pattern::rand_op},
        {"enq-deq", "push_back then pop_front pairs (queue enqueue/dequeue)",
         {op::push_back, op::pop_front}, 0, pattern::enq_deq},
        {"deque-pairs", "a random side, then push and pop at that side",
         {op::push_back, op::pop_back, op::push_front, op::pop_front}, 0, pattern::deque_pairs},
    };
    return all;
}

const workload* find_workload(std::string_view name) {
    for (const auto& w : workloads())
        if (w.name == name) return &w;
    return nullptr;
}

std::string_view to_string(op o) noexcept {
    switch (o) {
    case op::push_back: return "push_back";
    case op::pop_back: return "pop_back";
    case op::push_front: return "push_front";
    case op::pop_front: return "pop_front";
    case op::get: return "get";
    case op::swap: return "swap";
    }
    return "?";
}

bool can_run(const std::vector<op>& supports, const workload& w, std::vector<op>* missing) {
    bool ok = true;
    for (op o : w.needs) {
        if (std::find(supports.begin(), supports.end(), o) != supports.end()) continue;
        ok = false;
        if (missing) missing->push_back(o);
    }
    return ok;
}

op_stream::op_stream(const workload& w, unsigned tid, std::uint64_t seed, std::uint64_t index_range) noexcept
    : kind_(w.kind),
      state_(seed * 0x9e3779b97f4a7c15ULL + (std::uint64_t{tid} + 1) * 0xbf58476d1ce4e5b9ULL),
      range_(index_range),
      value_base_((std::uint64_t{tid} + 1) << 40) {}

std::uint64_t op_stream::random() noexcept {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

op_stream::step op_stream::next() noexcept {
    const std::uint64_t i = i_++;
    switch (kind_) {
    case pattern::push_pop:
        return i % 2 == 0 ? step{op::push_back, value(), 0} : step{op::pop_back, 0, 0};
    case pattern::swap_push_pop:
    case pattern::get_push_pop: {
        if (i % 2 == 1) {
            if (kind_ == pattern::get_push_pop) return {op::get, index(), 0};
            const auto a = index();
            return {op::swap, a, index()};
        }
        return i % 4 == 0 ? step{op::push_back, value(), 0} : step{op::pop_back, 0, 0};
    }
    case pattern::swap: {
        const auto a = index();
        return {op::swap, a, index()};
    }
    case pattern::get:
        return {op::get, index(), 0};
    case pattern::rand_op:
        return random() & 1 ? step{op::push_back, value(), 0} : step{op::pop_back, 0, 0};
    case pattern::enq_deq:
        return i % 2 == 0 ? step{op::push_back, value(), 0} : step{op::pop_front, 0, 0};
    case pattern::deque_pairs:
        if (i % 2 == 1) return {pending_, 0, 0};
        if (random() & 1) {
            pending_ = op::pop_front;
            return {op::push_front, value(), 0};
        }
        pending_ = op::pop_back;
        return {op::push_back, value(), 0};
    }
    return {op::get, 0, 0};
}

}  // namespace ferrite::bench
