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
// placed, present?) with a memo; keys have a handful of operations each.
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
    if (n > 62) return "too many operations on one key for the checker (" + std::to_string(n) + ")";
    std::uint64_t must = 0;
    for (std::size_t i = 0; i < n; ++i)
        if (ops[i].returned) must |= std::uint64_t{1} << i;
    std::set<std::pair<std::uint64_t, bool>> seen;
    // Iterative DFS over (placed mask, present).
    std::vector<std::pair<std::uint64_t, bool>> stack{{0, initially}};
    while (!stack.empty()) {
        const auto [mask, present] = stack.back();
        stack.pop_back();
        if (!seen.insert({mask, present}).second) continue;
        if ((mask & must) == must && present == recovered) return {};
        // Candidates: unplaced operations that no unplaced operation precedes in real time.
        std::uint64_t first_return = never;
        for (std::size_t i = 0; i < n; ++i)
            if (!(mask >> i & 1) && ops[i].completed < first_return) first_return = ops[i].completed;
        for (std::size_t i = 0; i < n; ++i) {
            if (mask >> i & 1) continue;
            const auto& o = ops[i];
            if (o.invoked > first_return) continue;  // an unplaced operation returned before it began
            bool response = false, after = present;
            switch (o.op) {
                case set_op::insert: response = !present; after = true; break;
                case set_op::erase: response = present; after = false; break;
                case set_op::contains: response = present; break;
            }
            if (o.returned && o.response != response) continue;
            stack.push_back({mask | std::uint64_t{1} << i, after});
        }
    }
    std::string text;
    for (const auto& o : ops)
        text += std::string(" t") + std::to_string(o.tid) + "#" + std::to_string(o.index) + " " + to_string(o.op) +
                (o.returned ? (o.response ? "=true" : "=false") : "=pending") + "[" + std::to_string(o.invoked) + "," +
                (o.completed == never ? std::string("-") : std::to_string(o.completed)) + "]";
    return std::string("recovered ") + (recovered ? "present" : "absent") + ", which no linearization of" + text +
           " explains";
}

}  // namespace ferrite::crash::sets_check
