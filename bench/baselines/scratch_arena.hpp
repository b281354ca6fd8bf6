// bench/baselines/scratch_arena.hpp: persistent memory for the log-free baselines
// (logfree-list, logfree-hash): scratch pool files carved by per-thread bump allocators.
//
// The log-free structures of David et al. (USENIX ATC 2018) allocate their nodes from
// NV-epochs, a persistent allocator whose recovery finds leaked nodes. The benchmark never
// recovers, so this arena is the simplest thing that puts the nodes in a pool file like every
// other persistent subject: a segment is a pmem::pool (ferrite/pmem/pool.hpp) whose root is
// one large byte area, sized for what the structure expects; allocate_shared() takes 64-byte aligned blocks from it under a mutex
// (setup: the hash buckets), allocate(tid) hands out 64-byte slots from the calling thread's
// chunk (64 KiB, taken from the segment with one fetch_add). When a segment is used up a new
// one is created (64 MiB unless told otherwise), so a long run never fails
// for lack of room. Nothing is ever freed (no reclamation: see logfree_set.hpp); all segment
// files are removed by the destructor.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

#include "ferrite/error.hpp"
#include "ferrite/pmem/pool.hpp"

namespace ferrite::bench {

class scratch_arena {
public:
    static constexpr std::size_t slot_bytes = 64;
    static constexpr std::uint64_t chunk_bytes = 64 << 10;
    static constexpr std::uint64_t min_segment_bytes = 64 << 20;

    // `threads` = the thread ids allocate() accepts (0..threads-1); first_bytes = the data
    // area of the first segment (at least 1 MiB or segment_bytes if smaller: creating a pool
    // costs about its size, so a small structure gets a small file); later segments have segment_bytes (tests make it
    // small). Both are rounded up to a multiple of chunk_bytes.
    scratch_arena(std::filesystem::path dir, unsigned threads, std::uint64_t first_bytes,
                  std::uint64_t segment_bytes = min_segment_bytes)
        : dir_(dir.empty() ? std::filesystem::path("/dev/shm") : std::move(dir)), cursors_(threads) {
        segment_bytes_ = round_up(std::max<std::uint64_t>(segment_bytes, 1), chunk_bytes);
        const auto first = round_up(std::max(first_bytes, std::min<std::uint64_t>(segment_bytes_, 1 << 20)), chunk_bytes);
        cur_.store(add_segment(first), std::memory_order_release);
    }
    ~scratch_arena() {
        for (auto& s : segments_) {
            s->pool.close();
            std::error_code ec;
            std::filesystem::remove(s->path, ec);
        }
    }
    scratch_arena(const scratch_arena&) = delete;
    scratch_arena& operator=(const scratch_arena&) = delete;

    // `bytes` (rounded up to 64) of zeroed pool memory, 64-byte aligned; not for hot paths.
    void* allocate_shared(std::uint64_t bytes) {
        bytes = round_up(bytes, slot_bytes);
        std::lock_guard lock(grow_);
        for (;;) {
            segment* s = cur_.load(std::memory_order_acquire);
            const auto off = s->top.fetch_add(bytes, std::memory_order_relaxed);
            if (off + bytes <= s->size) return s->base + off;
            cur_.store(add_segment(std::max(segment_bytes_, round_up(bytes, chunk_bytes))),
                       std::memory_order_release);
        }
    }

    // One 64-byte slot (zeroed when fresh) for thread `tid`.
    void* allocate(unsigned tid) {
        if (tid >= cursors_.size()) throw usage_error("scratch_arena: thread id out of range");
        cursor& c = cursors_[tid];
        if (c.next == c.end) refill(c);
        void* p = c.next;
        c.next += slot_bytes;
        return p;
    }

    std::size_t segments() const {
        std::lock_guard lock(grow_);
        return segments_.size();
    }

private:
    struct segment {
        pmem::pool pool;
        std::filesystem::path path;
        std::byte* base = nullptr;
        std::uint64_t size = 0;
        std::atomic<std::uint64_t> top{0};
    };
    struct alignas(64) cursor {
        std::byte* next = nullptr;
        std::byte* end = nullptr;
    };

    static std::uint64_t round_up(std::uint64_t v, std::uint64_t to) { return (v + to - 1) / to * to; }

    static std::atomic<unsigned>& serial() {
        static std::atomic<unsigned> n{0};
        return n;
    }

    // Called with grow_ held, or from the constructor.
    segment* add_segment(std::uint64_t bytes) {
        auto s = std::make_unique<segment>();
        s->path = dir_ / ("ferrite-bench-logfree-" + std::to_string(::getpid()) + "-" +
                          std::to_string(serial().fetch_add(1)));
        std::error_code ec;
        std::filesystem::remove(s->path, ec);  // a leftover of a killed run with the same pid
        s->pool = pmem::pool::create(s->path, "ferrite-bench-logfree", bytes + (64 << 10));
        s->base = static_cast<std::byte*>(s->pool.root_bytes(bytes, 64));
        s->size = bytes;
        segments_.push_back(std::move(s));
        return segments_.back().get();
    }

    void refill(cursor& c) {
        for (;;) {
            segment* s = cur_.load(std::memory_order_acquire);
            const auto off = s->top.fetch_add(chunk_bytes, std::memory_order_relaxed);
            if (off + chunk_bytes <= s->size) {
                c.next = s->base + off;
                c.end = c.next + chunk_bytes;
                return;
            }
            std::lock_guard lock(grow_);
            if (cur_.load(std::memory_order_acquire) == s)
                cur_.store(add_segment(segment_bytes_), std::memory_order_release);
        }
    }

    std::filesystem::path dir_;
    std::uint64_t segment_bytes_ = 0;
    mutable std::mutex grow_;
    std::vector<std::unique_ptr<segment>> segments_;
    std::atomic<segment*> cur_{nullptr};
    std::vector<cursor> cursors_;
};

}  // namespace ferrite::bench
