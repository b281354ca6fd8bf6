// The `volatile` engine: ferrite-kv with nothing persistent, the baseline the durable engines
// are measured against (and the engine a memcached user would recognise).
//
// Items live in 64 shards, each a mutex over a hash map from key to item and a CLOCK ring
// (second chance: a read sets the item's reference bit; eviction takes the oldest item whose
// bit is clear, clearing bits as it passes). The memory limit counts key, value and a fixed
// per-item overhead; when a store would pass it, the engine evicts from the store's shard, then
// tries the others without waiting for their locks, or refuses with out_of_memory when eviction
// is off (memcached's -M).
#pragma once

#include "engine.hpp"
#include "expiry.hpp"
#include "item_counters.hpp"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace ferrite::kv {

struct engine_limits {
  std::uint64_t memory_bytes = 64ull << 20;
  std::size_t max_item_bytes = 1 << 20;  // key + value, memcached's -I
  bool evict = true;
};

class volatile_engine final : public engine {
 public:
  explicit volatile_engine(engine_limits limits);
  ~volatile_engine() override;
  volatile_engine(const volatile_engine&) = delete;
  volatile_engine& operator=(const volatile_engine&) = delete;

  [[nodiscard]] std::string_view name() const override { return "volatile"; }
  bool get(std::string_view key, std::int64_t now, std::optional<std::int64_t> new_expires,
           const item_reader& read) override;
  store_outcome store(const store_request& request, std::int64_t now) override;
  remove_result remove(std::string_view key, std::uint64_t compare_cas, std::int64_t now) override;
  touch_result touch(std::string_view key, std::int64_t expires_at, std::int64_t now) override;
  arith_outcome arith(const arith_request& request, std::int64_t now) override;
  void flush(std::int64_t at, std::int64_t now) override;
  [[nodiscard]] engine_stats stats() const override;

  static constexpr std::size_t item_overhead = 96;  // the item record and its map entry

 private:
  struct item;
  struct shard;
  struct key_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const noexcept { return std::hash<std::string_view>{}(key); }
  };
  using item_map = std::unordered_map<std::string, std::unique_ptr<item>, key_hash, std::equal_to<>>;

  shard& shard_of(std::string_view key);
  item* find_live(shard& s, std::string_view key, std::int64_t now);
  void unlink(shard& s, item* it);
  void erase(shard& s, item* it);
  bool make_room(shard& s, std::size_t bytes);
  bool evict_one(shard& s);
  store_outcome put(shard& s, item* old, std::string_view key, std::string value, std::uint32_t flags,
                    std::int64_t expires_at, std::int64_t now);

  static constexpr std::size_t shard_count = 64;
  engine_limits limits_;
  std::array<std::unique_ptr<shard>, shard_count> shards_;
  std::atomic<std::uint64_t> next_cas_{0};
  item_counters counters_;
  flush_rule flushes_;
};

}  // namespace ferrite::kv
