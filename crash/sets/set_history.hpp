// crash/sets/set_history.hpp: durable linearizability of a recovered set, per key.
//
// A set is a collection of independent keys, and linearizability is local (Herlihy & Wing
// 1990: a history is linearizable iff each object's subhistory is), so the checker takes the
// keys one by one. For key k the history is every operation on k that returned before the
// crash, with its response and its real-time interval (invocation and return stamps from
// one global counter), plus each thread's pending operation on k (invoked, not returned: its
// interval is open and its response unknown). Durable linearizability (Izraelevitz, Mendes,
// Scott 2016) asks for an order of all the returned operations and some of the pending
// ones that respects real time (a returned before b was invoked: a first), gives every
// returned operation its response from the sequential set (insert: true iff absent; erase:
// true iff present; contains: present), starts from the set's state at creation and ends
// in the recovered membership of k. The search is a depth-first walk over (operations
// placed, present?) with a memo; real time leaves at most one candidate per thread.
#pragma once

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ferrite::crash::sets_check {

enum class set_op : std::uint8_t { insert, erase, contains };

inline const char* to_string(set_op o) {
    return o == set_op::insert ? "insert" : o == set_op::erase ? "erase" : "contains";
}

struct key_op {
    set_op op;
    bool returned;            // false: pending at the crash (response unknown)
    bool response;            // when returned
    std::uint64_t invoked;    // stamps of one global counter
    std::uint64_t completed;  // returned: its stamp; pending: infinity
    unsigned tid;
    std::uint64_t index;
};

inline constexpr std::uint64_t never = std::numeric_limits<std::uint64_t>::max();

// Empty if some linearization explains `recovered` (k's membership after recovery).
inline std::string check_key(const std::vector<key_op>& ops, bool initially, bool recovered) {
    const std::size_t n = ops.size();
    // DFS over (operations placed, present?) with a memo. Real time keeps the frontier as
    // narrow as the number of threads, so the states stay few even for long histories.
    using state = std::pair<std::vector<bool>, bool>;
    std::set<state> seen;
    std::vector<state> stack{{std::vector<bool>(n, false), initially}};
    while (!stack.empty()) {
        auto [placed, present] = std::move(stack.back());
        stack.pop_back();
        if (!seen.insert({placed, present}).second) continue;
        bool all_returned_placed = true;
        std::uint64_t first_return = never;  // earliest return among unplaced operations
        for (std::size_t i = 0; i < n; ++i) {
            if (placed[i]) continue;
            if (ops[i].returned) all_returned_placed = false;
            if (ops[i].completed < first_return) first_return = ops[i].completed;
        }
        if (all_returned_placed && present == recovered) return {};
        for (std::size_t i = 0; i < n; ++i) {
            if (placed[i]) continue;
            const auto& o = ops[i];
            if (o.invoked > first_return) continue;  // an unplaced operation returned before it began
            bool response = false, after = present;
            switch (o.op) {
                case set_op::insert: response = !present; after = true; break;
                case set_op::erase: response = present; after = false; break;
                case set_op::contains: response = present; break;
            }
            if (o.returned && o.response != response) continue;
            auto next = placed;
            next[i] = true;
            stack.push_back({std::move(next), after});
        }
    }
    std::string text;
    if (ops.size() > 24) text = " ... (" + std::to_string(ops.size() - 24) + " earlier)";
    for (std::size_t i = ops.size() > 24 ? ops.size() - 24 : 0; i < ops.size(); ++i) {
        const auto& o = ops[i];
        text += std::string(" t") + std::to_string(o.tid) + "#" + std::to_string(o.index) + " " + to_string(o.op) +
                (o.returned ? (o.response ? "=true" : "=false") : "=pending") + "[" + std::to_string(o.invoked) + "," +
                (o.completed == never ? std::string("-") : std::to_string(o.completed)) + "]";
    }
    return std::string("recovered ") + (recovered ? "present" : "absent") + ", which no linearization of" + text +
           " explains";
}

}  // namespace ferrite::crash::sets_check
