// bench/sets/set_pool.hpp: a scratch pool with a buddy heap and an anchor word for the
// durable-set bench subjects, sized for the keys a measurement may hold, that can be closed
// and opened again as after a restart (set-recovery); the file is removed when destroyed.
//
// Layout as bench/containers/scratch_pool.hpp (anchor in the first root line, the heap
// after it), but the heap is sized by the caller: every key of a durable set is one 64-byte
// node in a durable area of the heap (sets/node_store.hpp), so a table of n keys needs
// n * 64 bytes of areas, plus what epoch reclamation holds back and each thread's partly
// used area. heap_bytes_for() adds those margins. The pool file is allocated up front
// (tmpfs: real memory), so it is not made larger than the measurement needs.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/pmem/pool.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace ferrite::bench {

class set_pool {
public:
    static constexpr std::uint64_t min_heap_bytes = 16 << 20;
    static constexpr std::uint64_t node_bytes = 64;

    // Heap bytes for a table that may hold `keys` keys at once (0: unknown, then a margin
    // over `prefill`): half as much again for nodes retired but not yet reclaimed and for
    // areas left partly used, 8 MiB more for small tables and many threads (a 64 KiB area
    // per thread and list), at least 16 MiB: creating the pool costs about its size in
    // page zeroing, so small measurements keep small pools.
    static std::uint64_t heap_bytes_for(std::uint64_t keys, std::uint64_t prefill) {
        const std::uint64_t n = keys ? keys : 2 * prefill + (std::uint64_t{1} << 20);
        const std::uint64_t bytes = n * node_bytes + n * node_bytes / 2 + (std::uint64_t{8} << 20);
        return std::max(min_heap_bytes, (bytes + (1 << 20) - 1) & ~std::uint64_t{(1 << 20) - 1});
    }

    set_pool(const std::filesystem::path& dir, std::uint64_t heap_bytes)
        : path_((dir.empty() ? std::filesystem::path("/dev/shm") : dir) /
                ("ferrite-bench-set-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++))),
          heap_bytes_(heap_bytes),
          pool_(pmem::pool::create(path_, layout_name, heap_bytes + (4 << 20))) {
        root();
        heap_.reset(new alloc::buddy_heap(alloc::buddy_heap::create(pool_, pool_.state().root_offset + 64, heap_bytes_)));
    }
    ~set_pool() {
        heap_.reset();
        pool_.close();
        std::error_code ec;
        std::filesystem::remove(path_, ec);
    }
    set_pool(const set_pool&) = delete;
    set_pool& operator=(const set_pool&) = delete;

    const pmem::pool_ref& pool() const noexcept { return pool_; }
    alloc::buddy_heap& heap() noexcept { return *heap_; }
    std::uint64_t& anchor() noexcept { return *anchor_; }
    // Makes the anchor durable (node_store::create already does; kept so that a table
    // whose create leaves it to the caller, as the plan first had it, is safe too).
    void persist_anchor() noexcept {
        pmem::pwb(anchor_);
        pmem::pfence();
    }

    // A restart: the heap dropped and the pool closed (every structure on it must be gone),
    // then opened again and recovered as after a crash: heap.recover(), recover_clients
    // (each structure's recover(pool, heap, anchor)), heap.finish_recovery().
    void restart(const std::function<void(const pmem::pool_ref&, alloc::buddy_heap&, std::uint64_t)>& recover_clients) {
        heap_.reset();
        pool_.close();
        pool_ = pmem::pool::open(path_, layout_name);
        root();
        heap_.reset(new alloc::buddy_heap(alloc::buddy_heap::open(pool_, pool_.state().root_offset + 64)));
        heap_->recover();
        recover_clients(pool_, *heap_, *anchor_);
        heap_->finish_recovery();
        pool_.mark_recovered();
    }

private:
    static constexpr const char* layout_name = "ferrite-bench-set";
    static std::atomic<unsigned>& counter() {
        static std::atomic<unsigned> n{0};
        return n;
    }
    void root() { anchor_ = static_cast<std::uint64_t*>(pool_.root_bytes(64 + heap_bytes_)); }

    std::filesystem::path path_;
    std::uint64_t heap_bytes_;
    pmem::pool pool_;
    std::uint64_t* anchor_ = nullptr;
    std::unique_ptr<alloc::buddy_heap> heap_;
};

}  // namespace ferrite::bench
