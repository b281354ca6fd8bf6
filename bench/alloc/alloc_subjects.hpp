// bench/alloc/alloc_subjects.hpp: the three allocators of the allocator benchmark (issue 4)
// and the minimal client each pair runs against them.
//
//   buddy     ferrite::alloc::buddy_heap in a ferrite pool file (pool directory: /dev/shm or
//             $FERRITE_POOL_DIR), the full confirm protocol per pair (see buddy_pair()).
//   pmdk      libpmemobj's atomic allocator: pmemobj_alloc into a PMEMoid of the root, then
//             pmemobj_free of it. The atomic API persists the destination PMEMoid itself, so
//             it does the same job as buddy's allocation + client reference + confirm.
//   volatile  the same buddy_heap code and the same client over plain DRAM (create_in) with
//             every persistence instruction switched off (see volatile_scope).
//
// Every subject is "pre-warmed" before each measured loop: each thread allocates
// 2 * warm_blocks blocks of the measured size and frees every second one, so the allocator
// has free blocks of that size at hand (for buddy: free blocks whose buddy is live, so a pair
// neither splits nor merges; for PMDK: its per-thread runs/caches for that size class exist).
// The kept blocks are released after the loop. Warm-up is not timed.
#pragma once

#include <libpmemobj.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "bench/baselines/pmdk_pool.hpp"
#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/pmem/observer.hpp"
#include "ferrite/pmem/pool.hpp"

namespace ferrite::bench::alloc_bench {

inline constexpr std::size_t max_threads = 16;
inline constexpr std::size_t warm_blocks = 16;      // kept live per thread while measuring
inline constexpr std::uint64_t heap_bytes = std::uint64_t{64} << 20;  // per buddy heap

// ---- buddy (persistent) and volatile share the heap code and the client -------------------

// The client's persistent references: one word per thread, each on its own cache line.
struct alignas(64) client_word {
    std::uint64_t offset;  // heap offset of the block this thread owns, 0 for none
    unsigned char pad[56];
};
static_assert(sizeof(client_word) == 64);

// One allocate/free pair through the confirm protocol, as a minimal real client does it:
//   b = allocate(n); word := offset(b); pwb(word); pfence(); confirm_allocation(b);
//   deallocate(b);   word := 0;         pwb(word); pfence(); confirm_deallocation(b);
// The second pfence is not required by the heap's contract (confirm_deallocation starts
// with a pfence of its own, buddy_heap.hpp), but it is what the header's usage example and a
// client that wants "forgotten durably" at that point do; it costs one sfence per pair.
void buddy_pair(alloc::buddy_heap& heap, client_word& word, std::size_t bytes);

// Blocks of one size kept live during a measured loop (see the header comment).
class buddy_warmup {
public:
    buddy_warmup(alloc::buddy_heap& heap, std::size_t bytes);
    ~buddy_warmup();
    buddy_warmup(const buddy_warmup&) = delete;
    buddy_warmup& operator=(const buddy_warmup&) = delete;

private:
    alloc::buddy_heap& heap_;
    std::vector<void*> kept_;
};

// A buddy heap inside the root of a fresh ferrite pool file, removed on destruction.
class persistent_heap {
public:
    persistent_heap();
    ~persistent_heap();
    persistent_heap(const persistent_heap&) = delete;
    persistent_heap& operator=(const persistent_heap&) = delete;

    alloc::buddy_heap& heap() noexcept { return *heap_; }
    client_word& word(std::size_t thread) noexcept { return words_[thread]; }

private:
    std::filesystem::path path_;
    pmem::pool pool_;
    client_word* words_ = nullptr;
    std::unique_ptr<alloc::buddy_heap> heap_;
};

// The same heap over malloc'd DRAM.
class dram_heap {
public:
    dram_heap();
    ~dram_heap();
    dram_heap(const dram_heap&) = delete;
    dram_heap& operator=(const dram_heap&) = delete;

    alloc::buddy_heap& heap() noexcept { return *heap_; }
    client_word& word(std::size_t thread) noexcept { return words_[thread]; }

private:
    void* region_ = nullptr;
    client_word* words_ = nullptr;
    std::unique_ptr<alloc::buddy_heap> heap_;
};

// While alive, pwb/pfence/psync/nt_store emit no instruction at all: it installs a
// persistence_observer (ferrite/pmem/observer.hpp, the public hook the crash simulator uses)
// whose callbacks do nothing, and restores the previous observer on destruction. The
// primitives still bump the thread's counters, so pwb/op of volatile equals buddy's.
//
// Why not pmem::set_backend(backend::none): backend none still executes an sfence at every
// pfence/psync (backend.hpp), so it models eADR (no write-backs, fences kept), not "the same
// code without persistence". Both take the primitives' out-of-line slow path (one call per
// pwb/pfence), so the volatile figure carries that small call overhead and is an upper bound
// without any persistence instruction, not a separately compiled allocator.
// Single-threaded use only (install_observer's contract: no concurrent primitive calls).
class volatile_scope {
public:
    volatile_scope();
    ~volatile_scope();
    volatile_scope(const volatile_scope&) = delete;
    volatile_scope& operator=(const volatile_scope&) = delete;

private:
    struct null_observer final : pmem::persistence_observer {
        void on_pwb(const void*, const pmem::site&) noexcept override {}
        void on_pfence(const pmem::site&) noexcept override {}
        void on_psync(const pmem::site&) noexcept override {}
        void on_nt_store(void*, std::size_t, const pmem::site&) noexcept override {}
    };
    null_observer observer_;
    pmem::persistence_observer* previous_ = nullptr;
};

// ---- pmdk ----------------------------------------------------------------------------

struct pmdk_root {
    // Padded to a line's size (PMDK aligns the root to 16 bytes only, so no alignas here:
    // threads' slots are apart, if not always line-aligned).
    struct slot {
        PMEMoid oid;
        char pad[64 - sizeof(PMEMoid)];
    };
    slot slots[max_threads];                           // the measured pair's destination
    PMEMoid kept[max_threads][2 * warm_blocks];       // warm-up blocks
};

class pmdk_heap {
public:
    pmdk_heap();
    PMEMobjpool* pop() const noexcept { return pool_.get(); }
    pmdk_root& root() noexcept { return *root_; }

private:
    pmdk::pool pool_;
    pmdk_root* root_ = nullptr;
};

// pmemobj_alloc into slot.oid, then pmemobj_free(&slot.oid). Throws ferrite::error on failure.
void pmdk_pair(PMEMobjpool* pop, PMEMoid& slot, std::size_t bytes);

class pmdk_warmup {
public:
    pmdk_warmup(pmdk_heap& h, std::size_t thread, std::size_t bytes);
    ~pmdk_warmup();
    pmdk_warmup(const pmdk_warmup&) = delete;
    pmdk_warmup& operator=(const pmdk_warmup&) = delete;

private:
    PMEMoid* kept_;
};

}  // namespace ferrite::bench::alloc_bench
