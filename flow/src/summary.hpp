// flow/src/summary.hpp: what a call does to persistent memory, seen from its caller.
//
// Algorithm: FlowNvm is inter-procedural ([NVM] chapter 5); ferrite-flow builds one summary
// per function bottom-up over the call graph (callees first; a call into a recursive cycle
// not yet summarised is treated as unknown code: no effect), and a call applies its
// callee's summary in three steps: the callee's write-backs of its pointer arguments' lines
// (mapped onto the caller's places: the argument's object and offset), then the fence if
// the callee fences on every path, then the callee's stores through its arguments that are
// still pending (not fenced) at its return, which become the caller's pending stores at the
// call. So "a helper writes, the root persists", "the root writes, a helper persists" and
// "a helper writes back but forgets the fence" are all seen from the root.
//
// Differs from the paper: context-insensitive (one summary per function, not one per
// calling context), and the order inside the callee is kept only as "write-backs, then the
// fence": a callee that fences and then writes back more lines has those lines counted as
// fenced (a missed report, never a false one). A callee's write-backs are not counted as
// double flushes in the caller. A function that returns one of its pointer arguments (plus
// an offset) is followed through by place_of, so a store through an accessor's result is a
// store to the caller's object.
//
// Access paths: the write-backs and pending stores are also those in the object a pointer
// field of an argument points to (arg.field, one level: `n->next->key = k`, `log.region_`
// written back): the caller maps them onto the object its own read of that field stands for
// (place.hpp's canonical_of), or, if it has not read the field, onto one object that every
// later read of the field (its own, or another callee's path) shares. Deeper paths
// (arg.f.g) are dropped (a missed report, not a false one). A field of the caller's stack
// (a lambda's captures, an std::atomic_ref) points where the caller, or a constructor it
// called (bind, below), stored a pointer into it; with bind::load, the pointer the
// constructor read from an argument's field (an iterator: `begin()` returns `_M_start` by
// value, so it is a getter of that field, analysis.cpp's bound_return).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "place.hpp"

namespace ferrite::flow {

struct summary {
    // `field`: the access path arg.field (summarise_function): the range or store is in the
    // object a pointer field of the argument points to, the field at that constant offset
    // from what the argument points to; nullopt: in what the argument itself points to.
    struct range {
        unsigned arg;                        // the pointer argument's index
        std::optional<std::int64_t> field;
        std::optional<std::int64_t> offset;  // from what the argument (or its field) points to
        std::optional<std::uint64_t> len;
        bool sync;  // clflush: the line is at Fence at once
        std::optional<std::int64_t> field2;  // arg.field.field2: one level deeper (analysis.cpp's path2_of)
    };
    struct pending {
        unsigned arg;
        std::optional<std::int64_t> field;
        std::optional<std::int64_t> line;  // line of the argument's object; nullopt: unknown
        bool written_back;                 // Flush (true) or Write (false) at the return
        std::optional<std::int64_t> field2;  // arg.field.field2 (as range's)
    };  // (a sentinel or durable field's store is the callee's own: not handed on)
    std::vector<range> flushes;
    bool fences = false;  // a fence on every path, after the write-backs above (a set hint flag's
                          // early return counts: analysis.cpp's find_hints)
    std::vector<pending> pendings;
    // Every persistent store the function makes through an argument (written back or not, at
    // most 64; `written_back` unused): a caller checks each against a log it armed and has
    // not yet made durable (issue 22's seventh round: FlowNvm's log-before-modify across a
    // call, the vector's grow and vector_install).
    std::vector<pending> stores;
    // Stores to a sentinel through an argument (arg.field, at a line), in the order the
    // function makes them: a caller checks the pair pattern at the call, against its own
    // pending stores (all of them; only the unwritten ones when the function has fenced
    // on every path before the store: its fence makes the caller's write-backs durable).
    struct sentinel_store {
        unsigned arg;
        std::optional<std::int64_t> field;
        std::optional<std::int64_t> line;
        bool fenced_before;
        bool operator==(const sentinel_store&) const = default;
    };
    std::vector<sentinel_store> sentinels;
    // The function stores its pointer argument `from` (plus offset) into the field at
    // `field` of what argument `into` points to (a constructor binding a reference:
    // std::atomic_ref's, a wrapper's): a caller whose stack object is `into` knows where a
    // later access path into.field points (analysis.cpp's field_object).
    // With `load`: the pointer stored is the one loaded from the field at *load of what
    // `from` points to (an iterator's constructor copying `v._M_start`: begin() by value).
    struct bind {
        unsigned into;
        std::int64_t field;
        unsigned from;
        std::optional<std::int64_t> offset;
        std::optional<std::int64_t> load;
        bool operator==(const bind&) const = default;
    };
    std::vector<bind> binds;
    std::optional<passthrough> returns;  // returns an argument plus an offset (place.hpp)
    // The function's summary over its paths that return zero (false, a null count), when
    // every return's value is a constant, a phi of constants, or the condition of a branch
    // outside a loop (analysis.cpp's zero_return_cut): a caller's branch on the call's result
    // applies it on its zero edge (issue 22's eighth round: `if (write_back_deferred(size))
    // pfence();`, where a zero return means no write-back ran). Null: no such summary.
    std::shared_ptr<const summary> on_zero;
};

}  // namespace ferrite::flow
