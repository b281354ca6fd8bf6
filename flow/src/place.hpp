// flow/src/place.hpp: where an address points: its object, its cache line, its annotations.
//
// Algorithm: walk the address back through casts, GEPs (accumulating constant offsets) and
// llvm.ptr.annotation calls (the clang `annotate` attribute on a field, ferrite/pmem/flow.hpp)
// and calls to accessors that return an argument plus an offset (passthrough, below) to the
// underlying object: an argument, a load, a call's result, a stack slot or a global.
// The abstract location of FlowNvm ([NVM] chapter 5) is (object, cache line); ferrite-flow
// keeps the line so that a write-back of the wrong line is told from the right one.
//
// Assumes: an object starts on a cache line (ferrite's persistent objects are line-aligned,
// and a misaligned one only shifts which bytes share a line). A variable index loses the
// offset: the place is then "somewhere in the object" (line unknown).
#pragma once

#include <cstdint>
#include <optional>

#include <llvm/ADT/STLFunctionalExtras.h>

namespace llvm {
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
    bool stack = false;                  // the function's own stack (never persistent)
    bool global = false;                 // a global variable (volatile: not in a pool)
};

// A function that returns one of its pointer arguments plus an offset (an accessor such as
// std::array::operator[] or a field getter): the walk goes on through the call into that
// argument. Known from the function's summary (summary.hpp).
struct passthrough {
    unsigned arg;
    std::optional<std::int64_t> offset;  // nullopt: not a constant
};
using passthrough_of = llvm::function_ref<const passthrough*(const llvm::Function&)>;

place place_of(const llvm::Value* address, const llvm::DataLayout& layout, passthrough_of through = nullptr);

// The annotation string of a clang `annotate` attribute's global ("" if it is not one).
const char* annotation_text(const llvm::Value* global_string);

}  // namespace ferrite::flow
