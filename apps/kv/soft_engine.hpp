// The `soft` engine: ferrite-kv's items in a pool, every reply sent after its write is durable,
// everything acknowledged still there after kill -9.
//
// Layout (one ferrite::store, layout "ferrite-kv-1"):
//   * the store's heap holds the catalog and the index, a SOFT durable_map (docs/sets.md)
//     named "items" from a key's 128-bit digest (item_layout.hpp) to its item's offset;
//   * the store's user area holds the kv root (seeds, the item heap's place, the CAS
//     high-water mark, the flush marks) and a second buddy heap for the items, so every live
//     block of that heap is an item.
// Items of any size (key <= 250 bytes, value up to -I) are out of line: header, key, value.
//
// Concurrency: 1024 stripes of a reader-writer spin lock (sync/rw_spin_lock.hpp), chosen by digest. Readers share their
// stripe's lock while they copy a value out; every write (store, delete, touch, incr) holds it
// exclusively, so an old item is freed only when no reader can hold it, and read-modify-write
// commands are atomic. The index itself is lock-free (SOFT); the stripes order writers of one
// key and protect item memory.
//
// Crash consistency (the write order; every step durable before the next):
//   store:  allocate (pending) -> write item, pwb, pfence -> index.insert_or_assign
//           (SOFT: one pfence) -> confirm_allocation -> deallocate + confirm_deallocation of
//           the item it replaced. The reply is sent after all of it.
//   delete: index.erase -> deallocate + confirm_deallocation.
//   touch:  expires_at := new, pwb, pfence.
//   flush_all: the flush mark in the root, pwb, pfence.
//   CAS ids: each stripe takes ids from a range it reserves by raising the root's
//           high-water mark (pwb); the item's own pfence makes the raise durable before any id
//           of the range is in an item or a reply, so ids never repeat across restarts.
// Recovery (open): the store recovers the catalog and the index; then the item heap's undo
// log is rolled back; every indexed item is validated (a live or pending block of the item
// heap, sound header, digest matching its key: a damaged_pool error otherwise); referenced
// pending blocks are confirmed; every other live block (an item whose replacement or delete
// was cut short) is freed; the heap finishes its recovery. The public constructor first
// rehearses all of it on a copy-on-write mapping of the pool (rehearse(), ending with the item
// heap's whole check), so a damaged pool is refused with the file as it was: the real
// recovery writes (the heap's undo log, the index's recovery) before its last checks. A crash at
// any point of a store leaves the old item or the new one, and no leaked block.
#pragma once

#include "engine.hpp"
#include "expiry.hpp"
#include "item_counters.hpp"
#include "item_layout.hpp"

#include "ferrite/containers/catalog.hpp"
#include "ferrite/containers/durable_map.hpp"
#include "ferrite/containers/store.hpp"
#include "ferrite/pmem/flow.hpp"
#include "ferrite/sync/rw_spin_lock.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>  // std::unique_lock, std::lock_guard
#include <shared_mutex>  // std::shared_lock
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ferrite::kv {

struct soft_engine_options {
  std::filesystem::path pool;              // created when missing
  std::uint64_t size = 256ull << 20;       // bytes of a new pool
  std::size_t max_item_bytes = 1 << 20;
  bool evict = true;
  unsigned recovery_threads = 0;           // 0: all cores
  std::uint32_t index_area_bytes = 0;      // the index's durable areas on create (0: the sets' default)
  std::uint64_t cas_step = 1 << 16;        // how far each durable raise of the CAS high-water mark reaches
};


class soft_engine final : public engine {
 public:
  // Opens (or creates) the pool file options.pool as a ferrite::store and recovers it.
  explicit soft_engine(const soft_engine_options& options);
  // Runs over pieces someone else opened and recovered (the crash target): `names` is the
  // catalog of `pool` (its heap recovered and finished), `area` the zero-filled or earlier
  // formatted bytes for the kv root and the item heap. The item recovery runs here.
  soft_engine(pmem::pool& pool, catalog& names, std::span<std::byte> area, const soft_engine_options& options);
  ~soft_engine() override;
  soft_engine(const soft_engine&) = delete;
  soft_engine& operator=(const soft_engine&) = delete;

  [[nodiscard]] const recovery_report& recovery() const { return report_; }
  // What is inconsistent between the item heap and the index (empty: nothing): the heap's
  // own check, then that its allocated blocks are exactly the indexed items (no leak, nothing
  // pending). For tests and the crash target; no other thread may use the engine meanwhile.
  [[nodiscard]] std::vector<std::string> check_items() const;

  [[nodiscard]] std::string_view name() const override { return "soft"; }
  bool get(std::string_view key, std::int64_t now, std::optional<std::int64_t> new_expires,
           const item_reader& read) override;
  store_outcome store(const store_request& request, std::int64_t now) override;
  remove_result remove(std::string_view key, std::uint64_t compare_cas, std::int64_t now) override;
  touch_result touch(std::string_view key, std::int64_t expires_at, std::int64_t now) override;
  arith_outcome arith(const arith_request& request, std::int64_t now) override;
  void flush(std::int64_t at, std::int64_t now) override;
  [[nodiscard]] engine_stats stats() const override;

  struct kv_root;

 private:
  struct stripe;
  using index_type = durable_map<key_digest, std::uint64_t>;
  struct rehearsal_tag {};

  // The rehearsal of start() on a copy-on-write mapping (rehearse()); runs the item heap's
  // whole check after its recovery.
  soft_engine(pmem::pool& pool, catalog& names, std::span<std::byte> area, const soft_engine_options& options,
              rehearsal_tag);
  // What the public constructor will do to an existing pool (the store's open, then start()),
  // on a private copy of the file: throws what the real open would (damaged_pool), having
  // written nothing to the file.
  static void rehearse(const soft_engine_options& options);
  static void rehearse_open(const soft_engine_options& options);  // rehearse() without the advice added to damaged_pool
  void start();
  void format_root();
  void open_items();
  void recover_items();
  stripe& stripe_of(const key_digest& digest);
  item_header* item_at(std::uint64_t offset) const;
  // The indexed item for `key` (nullptr if none, or its slot holds another key).
  item_header* find(const key_digest& digest, std::string_view key, std::uint64_t* offset) const;
  [[nodiscard]] bool live(const item_header& item, std::int64_t now) const;
  // A CAS id from the stripe's reserved range (a new range when it is used up or a flush
  // happened). Called with the stripe held exclusively.
  std::uint64_t next_cas(stripe& s);
  // Writes a new item and publishes it under `digest`, freeing `replaced` (0: none).
  store_outcome publish(stripe& s, const key_digest& digest, std::string_view key, std::string_view head,
                        std::string_view tail, std::uint32_t flags, std::int64_t expires_at, std::int64_t now,
                        std::uint64_t replaced);
  void* allocate_with_eviction(stripe& s, std::size_t bytes);
  bool evict_one(stripe& s);
  void release(std::uint64_t offset);
  void drop(stripe& s, const key_digest& digest, std::uint64_t offset);

  static constexpr std::size_t stripe_count = 1024;
  soft_engine_options options_;
  std::chrono::steady_clock::time_point began_ = std::chrono::steady_clock::now();  // recovery timing
  std::optional<ferrite::store> owned_;  // when the engine opened the pool itself
  pmem::pool* pool_ = nullptr;
  catalog* names_ = nullptr;
  std::span<std::byte> area_;
  kv_root* root_ = nullptr;
  bool rehearsal_ = false;  // a rehearsal on a private copy (rehearse())
  std::unique_ptr<alloc::buddy_heap> items_;
  std::shared_ptr<index_type> index_;
  std::unique_ptr<stripe[]> stripes_;
  FERRITE_FLOW_SKIP std::unique_ptr<std::atomic<std::uint8_t>[]> referenced_;  // CLOCK bits, one per 64-byte granule
  std::size_t granules_ = 0;
  FERRITE_FLOW_SKIP sync::rw_spin_lock high_water_lock_;  // reserved_ and the root's CAS and flush words
  FERRITE_FLOW_SKIP std::uint64_t reserved_ = 0;  // every id up to it belongs to some stripe's range
  std::atomic<std::uint64_t> cas_generation_{0};  // bumped by flush_all: ranges start again above it
  flush_rule flushes_;
  FERRITE_FLOW_SKIP item_counters counters_;
  recovery_report report_;
};

}  // namespace ferrite::kv
