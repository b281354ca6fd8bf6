// flow/src/events.hpp: the persistence vocabulary ferrite-flow understands.
//
// Algorithm: each IR instruction maps to at most a few persistence events (FlowNvm's
// transfer-function inputs, [NVM] chapter 5): a store to memory, a non-temporal store, a
// write-back (flush) of one line or a range, a fence, or a persist (write-back of a range
// and a fence, libpmem's pmem_persist). The analysis (analysis.hpp) never looks at
// instructions, only at these events.
//
// What it recognises: plain, atomic and non-temporal stores, memcpy/memmove/memset;
// ferrite's primitives (ferrite::pmem::pwb, pwb_range, pwb_range_pair, pfence, psync,
// nt_store, nt_memcpy, nt_copy_lines), the x86 intrinsics as functions or as LLVM intrinsics (_mm_clwb,
// _mm_clflushopt, _mm_clflush, _mm_sfence, _mm_mfence, _mm_stream_si32/64), inline asm
// naming clwb/clflushopt/clflush/sfence/mfence/movnti, and libpmem / libpmemobj
// (pmem_flush, pmem_persist, pmem_drain, pmem_memcpy/memmove/memset with and without
// _persist/_nodrain, pmemobj_flush/persist/drain).
//
// Differs from the paper: FlowNvm needs nvm_cst annotations on the program's own flush and
// fence functions; the names above are built in, so ferrite's and libpmem's code needs none.
// Assumes: pmem_memcpy/memmove/memset (the flags variants) persist (their default).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace llvm {
class Instruction;
class Value;
}  // namespace llvm

namespace ferrite::flow {

// sync_flush: clflush, which x86 orders with later stores: the line is at Fence at once
// (the paper's synchronous flush, P-clflush).
enum class event_kind : std::uint8_t { write, nt_write, flush, sync_flush, fence, persist };

struct event {
    event_kind kind;
    const llvm::Value* ptr = nullptr;       // the address (none for a fence)
    std::optional<std::uint64_t> len;        // bytes from ptr; nullopt: not a constant
    const llvm::Value* stored = nullptr;     // a store's value (publication check)
};

// The events of one instruction, in program order (a pmem_memcpy_persist: write, persist).
std::vector<event> events_of(const llvm::Instruction& inst);

}  // namespace ferrite::flow
