// What every connection of one ferrite-kv server shares: the engine, the settings `stats
// settings` reports, and the server-wide counters of `stats`. Counters are relaxed atomics:
// they are statistics, read without stopping anyone.
#pragma once

#include "engine.hpp"

#include <atomic>
#include <cstdint>
#include <string>

namespace ferrite::kv {

inline constexpr std::string_view server_version = "ferrite-kv-0.1.0";

struct server_settings {
  std::string listen = "127.0.0.1";
  int port = 11211;
  int threads = 4;
  std::uint64_t memory_bytes = 64ull << 20;
  std::size_t max_item_bytes = 1 << 20;
  int max_connections = 1024;
  bool evict = true;
  std::string engine = "volatile";
  std::string pool;  // path of the pool file (durable engines)
};

struct server_counters {
  using counter = std::atomic<std::uint64_t>;
  counter curr_connections{0}, total_connections{0}, rejected_connections{0};
  counter cmd_get{0}, cmd_set{0}, cmd_flush{0}, cmd_touch{0}, cmd_meta{0};
  counter get_hits{0}, get_misses{0};
  counter delete_hits{0}, delete_misses{0};
  counter incr_hits{0}, incr_misses{0}, decr_hits{0}, decr_misses{0};
  counter cas_hits{0}, cas_misses{0}, cas_badval{0};
  counter touch_hits{0}, touch_misses{0};
  counter bytes_read{0}, bytes_written{0};

  static void bump(counter& c, std::uint64_t by = 1) { c.fetch_add(by, std::memory_order_relaxed); }
};

struct server_context {
  engine& store;
  const server_settings& settings;
  server_counters& counters;
  std::int64_t started_at = 0;  // unix seconds
};

}  // namespace ferrite::kv
