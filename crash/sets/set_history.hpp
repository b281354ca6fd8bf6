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
// placed, present?) with a memo: the returned operations in invocation order as a placed
// prefix plus a window of 64, the pending ones as a mask; real time leaves at most one
// candidate per thread, so the walk is about linear in the history. Where an operation was
// held up while others ran more than 64 on its key (random moments), the walk is repeated
// over bit vectors of the whole history.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <unordered_set>
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

// Any history: the placed set as a bit vector (O(n) a state).
inline bool explained_general(const std::vector<key_op>& ops, bool initially, bool recovered) {
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
        if (all_returned_placed && present == recovered) return true;
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
    return false;
}

// The usual history: returned operations in invocation order as a placed prefix plus a
// window of 64. `overflow` says the window was too small for some state (an operation that
// a thread held up while others ran 64 more on the key: random moments do that).
inline bool explained_windowed(const std::vector<key_op>& ops, bool initially, bool recovered, bool& overflow) {
    // Returned operations sorted by invocation, pending ones apart (at most one per thread).
    std::vector<const key_op*> done, pending;
    for (const auto& o : ops) (o.returned ? done : pending).push_back(&o);
    std::sort(done.begin(), done.end(), [](const key_op* a, const key_op* b) { return a->invoked < b->invoked; });
    if (pending.size() > 16) {
        overflow = true;
        return false;
    }
    const std::size_t n = done.size();
    std::vector<std::uint64_t> suffix_min(n + 1, never);  // earliest return among done[j..]
    for (std::size_t j = n; j-- > 0;) suffix_min[j] = std::min(suffix_min[j + 1], done[j]->completed);
    // A state: done[0..first) placed, window bit i: done[first + i] placed, pending bit j:
    // pending[j] placed, and whether the key is present. Real time keeps the unplaced
    // returned operations that can go next within a few of `first` (one per thread), so the
    // window of 64 never fills in practice; a state that would need more is reported.
    struct state {
        std::uint64_t first, window;
        std::uint32_t pend;
        bool present;
        bool operator==(const state&) const = default;
    };
    struct state_hash {
        std::size_t operator()(const state& s) const noexcept {
            return std::hash<std::uint64_t>()(s.first * 0x9e3779b97f4a7c15ull ^ s.window ^
                                              (std::uint64_t{s.pend} << 1 | s.present) * 0xbf58476d1ce4e5b9ull);
        }
    };
    std::unordered_set<state, state_hash> seen;
    std::vector<state> stack{{0, 0, 0, initially}};
    const auto apply = [](set_op op, bool present, bool& response) {
        switch (op) {
            case set_op::insert: response = !present; return true;
            case set_op::erase: response = present; return false;
            case set_op::contains: response = present; return present;
        }
        return present;
    };
        while (!stack.empty()) {
        state st = stack.back();
        stack.pop_back();
        while (st.window & 1) {  // slide past the placed prefix
            st.window >>= 1;
            ++st.first;
        }
        if (!seen.insert(st).second) continue;
        if (st.first == n && st.present == recovered) return true;
        std::uint64_t first_return = suffix_min[std::min<std::uint64_t>(n, st.first + 64)];
        for (std::uint64_t i = 0; i < 64 && st.first + i < n; ++i)
            if (!(st.window >> i & 1)) first_return = std::min(first_return, done[st.first + i]->completed);
        for (std::uint64_t i = 0; i < 64 && st.first + i < n; ++i) {
            if (st.window >> i & 1) continue;
            const key_op& o = *done[st.first + i];
            if (o.invoked > first_return) break;  // sorted by invocation: the rest began later still
            bool response = false;
            const bool after = apply(o.op, st.present, response);
            if (response != o.response) continue;
            stack.push_back({st.first, st.window | std::uint64_t{1} << i, st.pend, after});
        }
        if (st.first + 64 < n && done[st.first + 64]->invoked <= first_return) overflow = true;
        for (std::size_t j = 0; j < pending.size(); ++j) {
            if (st.pend >> j & 1) continue;
            if (pending[j]->invoked > first_return) continue;
            bool response = false;
            const bool after = apply(pending[j]->op, st.present, response);
            stack.push_back({st.first, st.window, st.pend | 1u << j, after});
        }
    }
    return false;
}

// Empty if some linearization explains `recovered` (k's membership after recovery).
inline std::string check_key(const std::vector<key_op>& ops, bool initially, bool recovered) {
    bool overflow = false;
    if (explained_windowed(ops, initially, recovered, overflow)) return {};
    if (overflow && explained_general(ops, initially, recovered)) return {};
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
