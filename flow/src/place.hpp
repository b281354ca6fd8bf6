// flow/src/place.hpp: where an address points: its object, its cache line, its annotations.
//
// Algorithm: walk the address back through casts, GEPs (accumulating constant offsets) and
// llvm.ptr.annotation calls (the clang `annotate` attribute on a field, ferrite/pmem/flow.hpp)
// and calls to accessors that return an argument plus an offset (passthrough, below) to the
// underlying object: an argument, a load, a call's result, a stack slot or a global. Loads
// of one field are one object (canonical_of, below).
// The abstract location of FlowNvm ([NVM] chapter 5) is (object, cache line); ferrite-flow
// keeps the line so that a write-back of the wrong line is told from the right one.
//
// Assumes: an object starts on a cache line (ferrite's persistent objects are line-aligned,
// and a misaligned one only shifts which bytes share a line). A variable index loses the
// offset: the place is then "somewhere in the object" (line unknown); so does a loop's
// cursor (a phi: the object its entry value points into); behind a variable index into an
// array of line-multiple elements, the bytes within the element are kept (place::stride:
// the field's lines of every element, `refs_[tid].intent_index` told from
// `refs_[tid].ref[i]`). The result object of a
// function returning by value (sret) counts as its stack, and so does what operator new,
// malloc and __cxa_allocate_exception return (DRAM: a thrown exception's message). A pointer field read
// twice in one function gives one object: a field re-pointed between the two reads is
// taken for the same object (a missed report, not a false one).
#pragma once

#include <cstdint>
#include <optional>

#include <llvm/ADT/STLFunctionalExtras.h>

namespace llvm {
class CallBase;
class Function;
class Value;
class DataLayout;
}  // namespace llvm

namespace ferrite::flow {

inline constexpr std::int64_t line_bytes = 64;

struct place {
    const llvm::Value* object = nullptr;
    std::optional<std::int64_t> offset;  // bytes from the object's start; nullopt: unknown
    bool sentinel = false;               // FERRITE_FLOW_SENTINEL field
    bool durable = false;                // FERRITE_FLOW_DURABLE field
    bool skip = false;                   // FERRITE_FLOW_SKIP field
    bool log = false;                    // FERRITE_FLOW_LOG field
    bool stack = false;                  // the function's own stack (never persistent)
    bool global = false;                 // a global variable (volatile: not in a pool)
    // Behind a variable index (offset nullopt), where known: the access's first byte lies in
    // [elem_lo, elem_hi] of an element of `stride` bytes, a multiple of the line size, of an
    // array that starts on a line (`refs_[tid].intent_index`: one byte; `refs_[tid].ref[i]`:
    // the field's whole array). 0: anywhere in the object.
    std::int64_t stride = 0;
    std::int64_t elem_lo = 0, elem_hi = 0;
    // Behind a variable index or a loop's cursor (offset nullopt): the constant offset the
    // walk had added before it lost the offset, the field's offset in its element
    // (`writes[i].word`, a range-for's `w.word`: 8). nullopt: lost from the start.
    std::optional<std::int64_t> field_in_element;
};

// A function that returns one of its pointer arguments plus an offset (an accessor such as
// std::array::operator[] or a field getter): the walk goes on through the call into that
// argument. Known from the function's summary (summary.hpp).
// With `load`, the function returns a pointer it loads from the argument plus *load (a
// getter of a pointer field plus an offset: `return region_ + k`): the walk then ends at
// the object canonical_of gives for that field.
struct passthrough {
    unsigned arg;
    std::optional<std::int64_t> offset;  // nullopt: not a constant
    std::optional<std::int64_t> load;    // the returned pointer is loaded from arg + *load
    bool skip = false;                   // every return is a FERRITE_FLOW_SKIP field's address
    // With load2: loaded from the pointer read at arg + *load, plus *load2 (a lambda that
    // returns a captured `this`'s field plus an index: the undo log rollback's `word(i)`,
    // base_ + entries[i].offset; issue 22's seventh round).
    std::optional<std::int64_t> load2;
};
using passthrough_of = llvm::function_ref<const passthrough*(const llvm::Function&)>;

// The object that stands for a loaded pointer (a load, or a call to a getter of a pointer
// field: passthrough::load): the analysis maps every read of one location (object,
// constant offset) to one value, so a pointer field read twice
// (`c.base + off` before and after a memset, `log_of(t)` called twice) is one object.
using canonical_of = llvm::function_ref<const llvm::Value*(const llvm::Value&)>;

place place_of(const llvm::Value* address, const llvm::DataLayout& layout, passthrough_of through = nullptr,
               canonical_of canonical = nullptr);

// A const member function with no argument but its object, defined in another unit, that
// returns a pointer (pmem::pool_ref::base()): its result is read like a pointer field of its
// object, at a pseudo offset (the key: far below any real field) that names the function,
// so two calls on one object give one object and a summary can name it as arg.field
// (issue 22's seventh round: the deque recovery's ring at pool.base() + h->data).
std::optional<std::int64_t> external_getter_key(const llvm::CallBase& call);
bool external_getter(const llvm::CallBase& call);

// The annotation string of a clang `annotate` attribute's global ("" if it is not one).
const char* annotation_text(const llvm::Value* global_string);

}  // namespace ferrite::flow
