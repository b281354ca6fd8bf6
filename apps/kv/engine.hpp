// ferrite-kv's storage engine interface: what the memcached protocol needs from a key-value
// store, and nothing about sockets or wire syntax.
//
// Every operation that reads and then writes an item (append, prepend, cas, incr/decr, touch)
// is one call, so an engine does it under its own synchronisation and the protocol never holds
// an item across calls. Values are handed to the protocol through a callback that runs while
// the engine keeps the item alive (a lock, or a reader epoch in a lock-free engine): the
// protocol copies what it needs into the reply and returns.
//
// Expiry and flush are the engine's business too (expiry.hpp has the rules memcached uses),
// because an expired item must look absent to every operation, not only to reads.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace ferrite::kv {

// Limits of the memcached text protocol.
inline constexpr std::size_t max_key_length = 250;
// The largest -I (key + value) the server accepts. A pool is validated against this, not
// against the -I it is opened with: items stored under a larger -I stay readable.
inline constexpr std::size_t largest_item_limit = std::size_t{1} << 30;

enum class store_mode { set, add, replace, append, prepend, cas };

enum class store_result {
  stored,         // STORED / HD
  not_stored,     // NOT_STORED / NS: add over a live key, replace/append/prepend of a missing one
  exists,         // EXISTS / EX: cas whose compare value is not the item's
  not_found,      // NOT_FOUND / NF: cas of a missing key
  too_large,      // SERVER_ERROR object too large for cache
  out_of_memory,  // SERVER_ERROR out of memory storing object (memory full, eviction off)
};

struct store_request {
  store_mode mode = store_mode::set;
  std::string_view key;
  std::string_view value;
  std::uint32_t flags = 0;
  std::int64_t expires_at = 0;   // absolute unix seconds, 0 = never (expiry.hpp converts)
  std::uint64_t compare_cas = 0; // mode cas, or any mode when nonzero (meta C flag)
};

struct store_outcome {
  store_result result = store_result::not_stored;
  std::uint64_t cas = 0;  // the stored item's CAS id when stored
  bool replaced = false;  // stored over a live item of the key (else it was absent)
};

// What a reader sees of a live item; valid only inside the callback.
struct item_view {
  std::string_view key;
  std::string_view value;
  std::uint32_t flags = 0;
  std::int64_t expires_at = 0;  // 0 = never
  std::uint64_t cas = 0;
};

using item_reader = std::function<void(const item_view&)>;

enum class remove_result { deleted, not_found, exists };
enum class touch_result { touched, not_found };

enum class arith_result { ok, not_found, non_numeric, exists };
struct arith_request {
  std::string_view key;
  bool increment = true;
  std::uint64_t delta = 1;
  std::uint64_t compare_cas = 0;               // nonzero: only if the item's CAS matches
  std::optional<std::int64_t> vivify_expires;  // create with `initial` when missing (meta N)
  std::uint64_t initial = 0;
  std::optional<std::int64_t> new_expires;     // meta T: set the expiry too
};
struct arith_outcome {
  arith_result result = arith_result::not_found;
  std::uint64_t value = 0;
  std::uint64_t cas = 0;
  std::int64_t expires_at = 0;
};

struct engine_stats {
  std::uint64_t items = 0;        // live or not yet reclaimed
  std::uint64_t total_items = 0;  // stored since start
  std::uint64_t bytes = 0;        // key + value bytes held
  std::uint64_t limit_bytes = 0;
  std::uint64_t evictions = 0;
  std::uint64_t expired_unfetched = 0;
  std::uint64_t reclaimed = 0;    // expired or flushed items removed on access
  // An engine with checkpoint epochs (cpnvm): the last committed one and how many this run
  // committed (`stats` shows them as durable_epoch and checkpoints; absent elsewhere).
  std::optional<std::uint64_t> durable_epoch;
  std::uint64_t checkpoints = 0;
};

// What a durable engine found when it opened its pool (the server logs it).
struct recovery_report {
  bool created = false;
  bool crashed = false;                    // the last run did not close the pool
  std::uint64_t items = 0;
  std::uint64_t freed_leftovers = 0;       // blocks of stores/deletes a crash cut short
  double milliseconds = 0;                 // all of it
  double pool_milliseconds = 0;            // of which: the store's open (catalog recovery)
  double index_milliseconds = 0;           // of which: the index's rebuild, or the image's replay and load
};

class engine {
 public:
  virtual ~engine() = default;

  // The server's worker threads, for an engine that must know them (cpnvm: every thread that
  // writes takes part in checkpoints). When wants_worker_hooks() is true the server calls, on
  // each worker thread: worker_started() before its first request and worker_stopping() after
  // its last; batch_begin() and batch_end() around each batch of requests read from one
  // connection, whose replies go out only after batch_end() returns (so a batch_end that
  // waits for durability acknowledges nothing early); worker_idle() before it waits for
  // input, which answers how long the worker may wait before it calls worker_idle() again
  // (nullopt: until input comes). `wake`, given to worker_started(), may be called from any
  // thread: it ends that worker's wait soon (it then calls worker_idle() again unless input
  // came). Engine calls come only from worker threads, inside a batch.
  using worker_wake = std::function<void()>;
  [[nodiscard]] virtual bool wants_worker_hooks() const { return false; }
  virtual void worker_started(worker_wake /*wake*/) {}
  virtual void worker_stopping() {}
  virtual void batch_begin() {}
  virtual void batch_end() {}
  virtual std::optional<std::chrono::nanoseconds> worker_idle() { return std::nullopt; }

  // The engine's name as `stats settings` and the log show it.
  [[nodiscard]] virtual std::string_view name() const = 0;

  // Calls `read` with the item when `key` is live. With `new_expires`, also sets its expiry
  // (gat, meta T) before reading. Returns whether the key was found.
  virtual bool get(std::string_view key, std::int64_t now, std::optional<std::int64_t> new_expires,
                   const item_reader& read) = 0;

  virtual store_outcome store(const store_request& request, std::int64_t now) = 0;

  // compare_cas nonzero: delete only when the item's CAS is that value (meta C flag).
  virtual remove_result remove(std::string_view key, std::uint64_t compare_cas, std::int64_t now) = 0;

  virtual touch_result touch(std::string_view key, std::int64_t expires_at, std::int64_t now) = 0;

  virtual arith_outcome arith(const arith_request& request, std::int64_t now) = 0;

  // Invalidates every item stored before `at` once `now` reaches `at` (flush_all [delay]).
  virtual void flush(std::int64_t at, std::int64_t now) = 0;

  [[nodiscard]] virtual engine_stats stats() const = 0;
};

}  // namespace ferrite::kv
