// crash/sets/set_history.hpp: durable linearizability of a recovered set or map, key by key.
//
// The one checker of the durable sets' crash targets (soft-*, linkfree-*) and of their
// concurrency tests. A set or map is a collection of independent keys, and linearizability
// is local (Herlihy & Wing 1990: a history is linearizable iff each object's subhistory
// is), so the checker takes the keys one by one. For key k the history is every operation
// on k that returned before the crash, with its response and its real-time interval
// (invocation and return stamps from one global counter), plus each thread's pending
// operation on k (invoked, not returned: its interval is open and its response unknown).
// Durable linearizability (Izraelevitz, Mendes, Scott 2016) asks for an order of all the
// returned operations and some of the pending ones that respects real time (a returned
// before b was invoked: a first), gives every returned operation its response from the
// sequential specification below, starts from the key's state at creation and ends in the
// key's recovered state (absent, or present with a value).
//
// Operations (a set is a map whose every value is 0):
//   insert(k, v)  -> true iff absent (then present with v)
//   erase(k)      -> true iff present (then absent)
//   contains(k)   -> present?
//   get(k)        -> the value or none
//   assign(k, v)  -> true iff absent (insert_or_assign: present with v either way)
//
// The search is a depth-first walk over (operations placed, state) with a memo: the
// returned operations in invocation order as a placed prefix plus a window of 64, the
// pending ones as a mask; real time leaves at most one candidate per thread, so the walk is
// about linear in the history. Where an operation was held up while others ran more than
// 64 on its key (random moments), the walk is repeated over bit vectors of the whole
// history (explained_general), which any history fits.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace ferrite::crash::sets_check {

enum class op_kind : std::uint8_t { insert, erase, contains, get, assign };

inline const char* name_of(op_kind k) {
    switch (k) {
        case op_kind::insert: return "insert";
        case op_kind::erase: return "erase";
        case op_kind::contains: return "contains";
        case op_kind::get: return "get";
        default: return "insert_or_assign";
    }
}

struct op {
    op_kind kind = op_kind::contains;
    std::uint64_t key = 0;
    std::uint64_t value = 0;  // insert and assign; 0 for a set
};

// What an operation returned: `flag` for the bool results, `value` for get (nullopt: absent).
struct response {
    bool flag = false;
    std::optional<std::uint64_t> value;
    friend bool operator==(const response&, const response&) = default;
};

using state = std::optional<std::uint64_t>;  // the key's value, or absent

// The sequential specification.
inline response apply_op(state& s, const op& o) {
    switch (o.kind) {
        case op_kind::insert:
            if (s) return {false, {}};
            s = o.value;
            return {true, {}};
        case op_kind::erase: {
            const bool was = s.has_value();
            s.reset();
            return {was, {}};
        }
        case op_kind::contains: return {s.has_value(), {}};
        case op_kind::get: return {false, s};
        default: {
            const bool fresh = !s.has_value();
            s = o.value;
            return {fresh, {}};
        }
    }
}

inline constexpr std::uint64_t never = std::numeric_limits<std::uint64_t>::max();

// One operation of the history as the checker sees it.
struct event {
    op what;
    bool returned = false;  // else pending at the crash (response unknown)
    response got;           // if returned
    std::uint64_t invoked = 0;         // stamps of one global counter
    std::uint64_t returned_at = never;  // pending: never
    unsigned tid = 0;
    std::uint64_t index = 0;  // the thread's operation number
};

inline std::string describe(const event& e) {
    std::string s("t");  // appended piecewise: GCC 12 warns (-Wrestrict) on "literal" + std::string&&
    s += std::to_string(e.tid);
    s += "#";
    s += std::to_string(e.index);
    s += " ";
    s += name_of(e.what.kind);
    s += " ";
    s += std::to_string(e.what.key);
    if (e.what.kind == op_kind::insert || e.what.kind == op_kind::assign) s += " := " + std::to_string(e.what.value);
    s += " [" + std::to_string(e.invoked) + ",";
    if (!e.returned) return s + "-] pending";
    s += std::to_string(e.returned_at) + "] -> ";
    if (e.what.kind == op_kind::get) return s + (e.got.value ? std::to_string(*e.got.value) : "none");
    return s + (e.got.flag ? "true" : "false");
}

namespace detail {
inline std::uint64_t end_of(const event& e) { return e.returned ? e.returned_at : never; }
// Applies e to s; false if e returned and its response is not the specification's.
inline bool step(const event& e, state& s) {
    const response r = apply_op(s, e.what);
    return !e.returned || r == e.got;
}
}  // namespace detail

// Any history: the placed set as a bit vector (O(n) a state).
inline bool explained_general(const std::vector<event>& ev, const state& initially, const state& recovered) {
    const std::size_t n = ev.size();
    // DFS over (operations placed, state) with a memo. Real time keeps the frontier as
    // narrow as the number of threads, so the states stay few even for long histories.
    using node = std::pair<std::vector<bool>, state>;
    std::set<node> seen;
    std::vector<node> stack{{std::vector<bool>(n, false), initially}};
    while (!stack.empty()) {
        auto [placed, s] = std::move(stack.back());
        stack.pop_back();
        if (!seen.insert({placed, s}).second) continue;
        bool all_returned_placed = true;
        std::uint64_t first_return = never;  // earliest return among unplaced operations
        for (std::size_t i = 0; i < n; ++i) {
            if (placed[i]) continue;
            if (ev[i].returned) all_returned_placed = false;
            first_return = std::min(first_return, detail::end_of(ev[i]));
        }
        if (all_returned_placed && s == recovered) return true;
        for (std::size_t i = 0; i < n; ++i) {
            if (placed[i] || ev[i].invoked > first_return) continue;  // an unplaced operation returned before it began
            state after = s;
            if (!detail::step(ev[i], after)) continue;
            auto next = placed;
            next[i] = true;
            stack.push_back({std::move(next), after});
        }
    }
    return false;
}

// The usual history: returned operations in invocation order as a placed prefix plus a
// window of 64. `overflow` says the window was too small for some state (an operation that
// a thread held up while others ran 64 more on the key: random moments do that), or that
// there were more than 32 pending operations.
inline bool explained_windowed(const std::vector<event>& ev, const state& initially, const state& recovered,
                               bool& overflow) {
    // Returned operations sorted by invocation, pending ones apart (at most one per thread).
    std::vector<const event*> done, pending;
    for (const auto& e : ev) (e.returned ? done : pending).push_back(&e);
    std::stable_sort(done.begin(), done.end(), [](const event* a, const event* b) { return a->invoked < b->invoked; });
    if (pending.size() > 32) {
        overflow = true;
        return false;
    }
    const std::size_t n = done.size();
    std::vector<std::uint64_t> suffix_min(n + 1, never);  // earliest return among done[j..]
    for (std::size_t j = n; j-- > 0;) suffix_min[j] = std::min(suffix_min[j + 1], done[j]->returned_at);
    // A node: done[0..first) placed, window bit i: done[first + i] placed, pending bit j:
    // pending[j] placed, and the key's state. Real time keeps the unplaced returned
    // operations that can go next within a few of `first` (one per thread), so the window
    // of 64 never fills in practice; a node that would need more is reported.
    struct node {
        std::uint64_t first, window;
        std::uint32_t pend;
        state s;
        bool operator==(const node&) const = default;
    };
    struct node_hash {
        std::size_t operator()(const node& x) const noexcept {
            const std::uint64_t v = x.s ? *x.s * 0x94d049bb133111ebull + 1 : 0;
            return std::hash<std::uint64_t>()(x.first * 0x9e3779b97f4a7c15ull ^ x.window ^
                                              (std::uint64_t{x.pend} << 1 | x.s.has_value()) * 0xbf58476d1ce4e5b9ull ^
                                              v);
        }
    };
    std::unordered_set<node, node_hash> seen;
    std::vector<node> stack{{0, 0, 0, initially}};
    while (!stack.empty()) {
        node x = stack.back();
        stack.pop_back();
        while (x.window & 1) {  // slide past the placed prefix
            x.window >>= 1;
            ++x.first;
        }
        if (!seen.insert(x).second) continue;
        if (x.first == n && x.s == recovered) return true;
        std::uint64_t first_return = suffix_min[std::min<std::uint64_t>(n, x.first + 64)];
        for (std::uint64_t i = 0; i < 64 && x.first + i < n; ++i)
            if (!(x.window >> i & 1)) first_return = std::min(first_return, done[x.first + i]->returned_at);
        for (std::uint64_t i = 0; i < 64 && x.first + i < n; ++i) {
            if (x.window >> i & 1) continue;
            const event& e = *done[x.first + i];
            if (e.invoked > first_return) break;  // sorted by invocation: the rest began later still
            state after = x.s;
            if (!detail::step(e, after)) continue;
            stack.push_back({x.first, x.window | std::uint64_t{1} << i, x.pend, after});
        }
        if (x.first + 64 < n && done[x.first + 64]->invoked <= first_return) overflow = true;
        for (std::size_t j = 0; j < pending.size(); ++j) {
            if (x.pend >> j & 1 || pending[j]->invoked > first_return) continue;
            state after = x.s;
            detail::step(*pending[j], after);
            stack.push_back({x.first, x.window, x.pend | std::uint32_t{1} << j, after});
        }
    }
    return false;
}

// Empty if some linearization of key's events, from `initially`, explains `recovered`;
// else why not (the key's last 24 operations).
inline std::string check_key(std::uint64_t key, const std::vector<event>& ev, const state& recovered,
                             const state& initially = {}) {
    bool overflow = false;
    if (explained_windowed(ev, initially, recovered, overflow)) return {};
    if (overflow && explained_general(ev, initially, recovered)) return {};
    std::string ops;
    if (ev.size() > 24) ops = "... (" + std::to_string(ev.size() - 24) + " earlier)";
    for (std::size_t i = ev.size() > 24 ? ev.size() - 24 : 0; i < ev.size(); ++i)
        ops += (ops.empty() ? "" : ", ") + describe(ev[i]);
    return "key " + std::to_string(key) + " recovered " +
           (recovered ? "with value " + std::to_string(*recovered) : std::string("absent")) +
           ", which no linearization of its operations explains: " + ops;
}

// Every key in [0, keys), each starting absent: empty if each is explained.
inline std::string check_history(const std::vector<event>& all, const std::map<std::uint64_t, std::uint64_t>& recovered,
                                 std::uint64_t keys) {
    std::vector<std::vector<event>> by_key(keys);
    for (const auto& e : all) {
        if (e.what.key >= keys) return "an operation on key " + std::to_string(e.what.key) + " outside the key range";
        by_key[e.what.key].push_back(e);
    }
    for (const auto& [k, v] : recovered)
        if (k >= keys) return "recovered key " + std::to_string(k) + ", which no thread ever inserted";
    for (std::uint64_t k = 0; k < keys; ++k) {
        auto it = recovered.find(k);
        const state s = it == recovered.end() ? state{} : state{it->second};
        if (auto problem = check_key(k, by_key[k], s); !problem.empty()) return problem;
    }
    return {};
}

}  // namespace ferrite::crash::sets_check
