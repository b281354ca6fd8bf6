// ferrite/pmem/backend.hpp: which instruction sequence the persistence primitives emit.
//
// The backend is process-wide, never chosen per call (libpmem2 does the same with its
// persist_fn). In order of precedence:
//   1. set_backend() by the program (before it starts using pools);
//   2. the environment variable FERRITE_BACKEND (or its older name FERRITE_PMEM_BACKEND):
//      clwb, clflushopt, clflush, none, emulated;
//   3. the platform: every pool mapping reports its store granularity (libpmem2). While
//      every pool mapped so far has byte granularity (eADR, or CXL memory with a persistent
//      cache domain: the caches are in the persistence domain), the backend is `none`,
//      fences only; a pool of cache-line granularity (ADR: write-back needed) or of page
//      granularity (tmpfs or the page cache, ferrite's stand-in for persistent memory)
//      switches the process to the CPU's best write-back (clwb > clflushopt > clflush),
//      for good: a flush too many is harmless, one too few is not. Before any pool is
//      mapped, the CPU's best write-back.
// backend_reason() says which rule chose it (`ferrite pool info` prints it).
//
//   clwb        write back, keep the line cached          (Skylake-SP and later)
//   clflushopt  write back + invalidate, unordered         (Skylake and later)
//   clflush     write back + invalidate, ordered (slow)    (every x86-64)
//   none        caches are persistent (eADR / battery-backed DRAM): pwb emits nothing,
//               nt_store / nt_memcpy store through the cache (a cached store is already
//               durable; bypassing the cache only adds a trip to memory), pfence still
//               emits sfence
//   emulated    the best real flush instruction plus a busy-wait per written-back line and
//               per fence, to mimic slower persistent media on DRAM (see emulated_latency)
//
// The crash simulator does not use a backend: it installs a persistence_observer
// (observer.hpp) that sees every call, with its source location.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ferrite::pmem {

enum class backend : std::uint8_t { clwb, clflushopt, clflush, none, emulated };

inline constexpr backend all_backends[] = {backend::clwb, backend::clflushopt, backend::clflush,
                                           backend::none, backend::emulated};

std::string_view to_string(backend) noexcept;
std::optional<backend> backend_from_string(std::string_view) noexcept;

// Whether this CPU can run the backend (none and emulated always can).
bool cpu_supports(backend) noexcept;

// The best flushing backend of this CPU (clwb > clflushopt > clflush).
backend detect_backend() noexcept;

// The backend in use (resolves it on first call, see the header comment).
backend current_backend() noexcept;

// Switch backend. Throws ferrite::usage_error if the CPU lacks the instruction.
// Not meant to be called while other threads are issuing persistence instructions.
void set_backend(backend);

// Why the current backend is in use, in a sentence ("byte granularity (libpmem2): ...").
std::string backend_reason();

enum class granularity : std::uint8_t;  // pool.hpp

namespace detail {
// Called by pool for every mapping it makes: rule 3 above.
void note_pool_granularity(granularity) noexcept;
// Tests only: forget every choice, as in a new process.
void forget_backend_choice() noexcept;
}  // namespace detail

// Delays added by the emulated backend, in nanoseconds. The defaults (pwb 100 ns,
// fence 0 ns) approximate first-generation Optane write-back cost beyond DRAM.
struct emulated_latency {
    std::uint32_t pwb_ns = 100;
    std::uint32_t fence_ns = 0;
};
void set_emulated_latency(emulated_latency) noexcept;
emulated_latency current_emulated_latency() noexcept;

}  // namespace ferrite::pmem
