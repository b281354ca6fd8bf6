// bench/containers/scratch_pool.hpp: a fresh pool with a buddy heap and an anchor word, for
// the bench subjects of ferrite's containers; removed when destroyed.
//
// Layout: the anchor in the first root line, the heap (48 MiB) after it, in a 64 MiB pool
// file in the configured pool directory (/dev/shm if none).
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <string>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/pmem/pool.hpp"

namespace ferrite::bench {

class scratch_pool {
public:
    static constexpr std::uint64_t pool_bytes = 64 << 20;
    static constexpr std::uint64_t heap_bytes = 48 << 20;

    explicit scratch_pool(const std::filesystem::path& dir)
        : path_((dir.empty() ? std::filesystem::path("/dev/shm") : dir) /
                ("ferrite-bench-vector-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++))),
          pool_(pmem::pool::create(path_, "ferrite-bench-vector", pool_bytes)),
          anchor_(static_cast<std::uint64_t*>(pool_.root_bytes(64 + heap_bytes))),
          heap_(alloc::buddy_heap::create(pool_, pool_.state().root_offset + 64, heap_bytes)) {}
    ~scratch_pool() {
        pool_.close();
        std::error_code ec;
        std::filesystem::remove(path_, ec);
    }
    scratch_pool(const scratch_pool&) = delete;
    scratch_pool& operator=(const scratch_pool&) = delete;

    pmem::pool& pool() { return pool_; }
    alloc::buddy_heap& heap() { return heap_; }
    std::uint64_t& anchor() { return *anchor_; }

private:
    static std::atomic<unsigned>& counter() {
        static std::atomic<unsigned> n{0};
        return n;
    }

    std::filesystem::path path_;
    pmem::pool pool_;
    std::uint64_t* anchor_;
    alloc::buddy_heap heap_;
};

}  // namespace ferrite::bench
