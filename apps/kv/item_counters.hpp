// The item figures every engine keeps for `stats`: relaxed atomics, because they are
// statistics, read without stopping anyone.
#pragma once

#include "engine.hpp"

#include <atomic>
#include <cstdint>

namespace ferrite::kv {

struct item_counters {
  std::atomic<std::uint64_t> items{0};
  std::atomic<std::uint64_t> bytes{0};  // key + value bytes held
  std::atomic<std::uint64_t> total_items{0};
  std::atomic<std::uint64_t> evictions{0};
  std::atomic<std::uint64_t> reclaimed{0};
  std::atomic<std::uint64_t> expired_unfetched{0};

  [[nodiscard]] engine_stats snapshot(std::uint64_t limit_bytes) const {
    engine_stats out;
    out.items = items.load(std::memory_order_relaxed);
    out.total_items = total_items.load(std::memory_order_relaxed);
    out.bytes = bytes.load(std::memory_order_relaxed);
    out.limit_bytes = limit_bytes;
    out.evictions = evictions.load(std::memory_order_relaxed);
    out.expired_unfetched = expired_unfetched.load(std::memory_order_relaxed);
    out.reclaimed = reclaimed.load(std::memory_order_relaxed);
    return out;
  }
};

}  // namespace ferrite::kv
