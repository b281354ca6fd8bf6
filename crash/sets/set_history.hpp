// crash/sets/set_history.hpp: durable linearizability of a recovered set or map, key by key.
//
// Linearizability is local (Herlihy & Wing 1990): a history of a set or map is linearizable
// iff the subhistory of every key is, since operations on different keys commute. So each
// key is checked alone: its operations that returned before the crash (with the responses
// they returned and their real-time order: a global clock read at invocation and return)
// and at most one pending operation per thread (invoked, not returned: it may have taken
// effect or not). The recovered state of the key (absent, or present with a value) must be
// the final state of some linearization: an order of all returned operations and any
// subset of pending ones that respects real time (a before b if a returned before b was
// invoked), in which every returned operation gets the response it returned. A depth-first
// search over such orders with memo on (operations placed, state): a key has a few
// operations per thread in a target's run.
//
// Operations (a set has one value, 0):
//   insert(k, v)  -> true iff absent (then present with v)
//   erase(k)      -> true iff present (then absent)
//   contains(k)   -> present?
//   get(k)        -> the value or none
//   assign(k, v)  -> true iff absent (insert_or_assign: present with v either way)
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
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
    std::uint64_t value = 0;
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

// One operation of the history as the checker sees it.
struct event {
    op what;
    bool returned = false;  // else pending at the crash
    response got;           // if returned
    std::uint64_t invoked = 0, returned_at = 0;  // global clock; returned_at unused if pending
    unsigned tid = 0;
    std::uint64_t index = 0;  // the thread's operation number
};

inline std::string describe(const event& e) {
    std::string s = "thread " + std::to_string(e.tid) + " op " + std::to_string(e.index) + " (" + name_of(e.what.kind) +
                    " " + std::to_string(e.what.key);
    if (e.what.kind == op_kind::insert || e.what.kind == op_kind::assign) s += " := " + std::to_string(e.what.value);
    s += " at " + std::to_string(e.invoked);
    if (!e.returned) return s + ", pending)";
    s += ".." + std::to_string(e.returned_at) + " -> ";
    if (e.what.kind == op_kind::get) return s + (e.got.value ? std::to_string(*e.got.value) : "none") + ")";
    return s + (e.got.flag ? "true" : "false") + ")";
}

// Empty if the key's events explain `recovered` (see the header), else why not.
inline std::string check_key(std::uint64_t key, const std::vector<event>& ev, const state& recovered) {
    const std::size_t n = ev.size();
    if (n > 64) return "key " + std::to_string(key) + ": too many operations for the checker (" + std::to_string(n) + ")";
    std::vector<std::uint64_t> before(n, 0);  // ops that must precede i
    std::uint64_t must = 0;                   // returned ops
    for (std::size_t i = 0; i < n; ++i) {
        if (ev[i].returned) must |= std::uint64_t{1} << i;
        for (std::size_t j = 0; j < n; ++j)
            if (j != i && ev[j].returned && ev[j].returned_at < ev[i].invoked) before[i] |= std::uint64_t{1} << j;
    }
    std::set<std::pair<std::uint64_t, state>> seen;
    // iterative DFS
    std::vector<std::pair<std::uint64_t, state>> stack{{0, state{}}};
    while (!stack.empty()) {
        auto [mask, s] = stack.back();
        stack.pop_back();
        if (!seen.insert({mask, s}).second) continue;
        if ((mask & must) == must && s == recovered) return {};
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint64_t bit = std::uint64_t{1} << i;
            if ((mask & bit) != 0 || (before[i] & ~mask) != 0) continue;
            state next = s;
            const response r = apply_op(next, ev[i].what);
            if (ev[i].returned && !(r == ev[i].got)) continue;
            stack.push_back({mask | bit, next});
        }
    }
    std::string ops;
    for (const auto& e : ev) ops += (ops.empty() ? "" : ", ") + describe(e);
    return "key " + std::to_string(key) + " recovered " + (recovered ? "with value " + std::to_string(*recovered) : "absent") +
           ", which no linearization of its operations explains: " + ops;
}

// Every key in [0, keys): empty if each is explained.
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
