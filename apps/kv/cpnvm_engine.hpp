// The `cpnvm` engine: an ordinary lock-based hash table with CLOCK eviction, made durable by
// CpNvm ([NVM] ch. 4; ferrite::program_image, docs/checkpointing.md) instead of by flushes of
// its own. It is the test of CpNvm's promise: a volatile program, plus a mark before
// each write and a checkpoint between requests, survives kill -9.
//
// Layout: one ferrite::store (layout "ferrite-kv-cpnvm-1") whose catalog names one program
// image "kv"; inside it, the table of cpnvm_table.hpp and items allocated from the image's
// own allocator (size classes; an item's block is at most program_image::max_reused_block
// and a quarter of a thread's log: with the defaults, items of -I up to 4 MiB).
//
// Concurrency: 1024 stripes of a reader-writer spin lock, chosen by the key's hash (every
// bucket belongs to one stripe). Readers share the stripe while they copy a value out; every
// write holds it exclusively. CLOCK reference bits live outside the image (one byte per
// 64-byte granule): a read writes nothing in the image, so gets cost no checkpoint work.
//
// Durability (--durability):
//   epoch  a reply goes out at once; the write is durable when the epoch holding it commits
//          (every `interval`, or sooner when a thread's marks fill a quarter of its log). A
//          crash loses at most the writes of the epochs that had not committed, and never
//          tears one: the image after a restart is the table as it was between two requests.
//   sync   the replies of a batch of requests go out after the epoch holding its writes is
//          durable (batch_end calls program_image::sync()): group commit, since every worker
//          busy at that moment takes part in the same checkpoint.
// Threads: a worker registers with the image (worker_started). When it runs out of input with
// nothing marked (or in sync mode) it is quiescent while it waits (worker_idle): no checkpoint
// waits for an idle connection. With marked lines in epoch mode it waits still counted, with
// a timer set to when the interval's checkpoint is due, and takes part in that checkpoint;
// a thread that forces one sooner (a full log budget, sync, a stopping worker) wakes it
// first (the server's wake). So an idle server's writes are durable within one interval,
// and a busy one commits once per interval: forcing a checkpoint at every idle moment, as
// the first version did, made 3,400 a second under a depth-1 load of sets.
//
// Open: the store recovers the catalog; program_image::open replays committed epochs not yet
// applied and loads the image; then every chain is validated (offsets inside what the image's
// allocator handed out and aligned, lengths, the hash, no item reached twice, no two blocks
// overlapping) and every free block of the image's allocator lies outside the table and the
// items; a missing table root in an image that holds data is damage, not a new table. The
// public constructor first rehearses all of it on a copy-on-write mapping of the pool
// (rehearse()), since the store's open and the image's replay write before the table is
// checked: a damaged image is a clear error and the pool is left as it was. CAS ids continue 2^32 above the last
// one in the image, so ids a lost epoch handed out are never handed out again.
//
// What differs from memcached: no slab rebalancing, so a store whose size class has nothing
// left to evict is refused with SERVER_ERROR out of memory even if other classes have room;
// the table does not grow (its buckets are sized from the image at create).
#pragma once

#include "engine.hpp"
#include "expiry.hpp"
#include "item_counters.hpp"

#include "ferrite/containers/program_image.hpp"
#include "ferrite/containers/store.hpp"
#include "ferrite/sync/rw_spin_lock.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace ferrite::kv {

struct cp_table;
struct cp_item;

enum class durability { epoch, sync };

struct cpnvm_engine_options {
  std::filesystem::path pool;               // created when missing
  std::uint64_t size = 0;                   // bytes of a new pool (0: what the image and logs need)
  std::uint64_t memory_bytes = 64ull << 20; // the image's size, at create
  std::size_t max_item_bytes = 1 << 20;     // key + value
  bool evict = true;
  durability mode = durability::epoch;
  std::chrono::milliseconds interval{64};   // how often an epoch commits under load
  unsigned worker_threads = 4;              // at create: logs for this many workers (a reopen may use fewer)
  std::uint64_t log_bytes = 16ull << 20;    // per thread, at create
};

class cpnvm_engine final : public engine {
 public:
  // Opens (or creates) the pool file options.pool and its image "kv".
  explicit cpnvm_engine(const cpnvm_engine_options& options);
  // Runs in an image someone else opened and recovered (the crash target); the table is
  // created in it or validated. options.pool, size, memory_bytes are not used.
  cpnvm_engine(std::shared_ptr<program_image> image, const cpnvm_engine_options& options);
  ~cpnvm_engine() override;
  cpnvm_engine(const cpnvm_engine&) = delete;
  cpnvm_engine& operator=(const cpnvm_engine&) = delete;

  [[nodiscard]] const recovery_report& recovery() const { return report_; }
  [[nodiscard]] std::uint64_t committed_epoch() const { return image_->committed_epoch(); }
  // What is inconsistent in the table (empty: nothing): every chain sound, the counts agree.
  // For tests; no worker may run meanwhile.
  [[nodiscard]] std::vector<std::string> check_items() const;

  [[nodiscard]] std::string_view name() const override { return "cpnvm"; }
  bool get(std::string_view key, std::int64_t now, std::optional<std::int64_t> new_expires,
           const item_reader& read) override;
  store_outcome store(const store_request& request, std::int64_t now) override;
  remove_result remove(std::string_view key, std::uint64_t compare_cas, std::int64_t now) override;
  touch_result touch(std::string_view key, std::int64_t expires_at, std::int64_t now) override;
  arith_outcome arith(const arith_request& request, std::int64_t now) override;
  void flush(std::int64_t at, std::int64_t now) override;
  [[nodiscard]] engine_stats stats() const override;

  [[nodiscard]] bool wants_worker_hooks() const override { return true; }
  void worker_started(worker_wake wake) override;
  void worker_stopping() override;
  void batch_begin() override;
  void batch_end() override;
  std::optional<std::chrono::nanoseconds> worker_idle() override;

  // A worker as the other threads see it while it waits for input still counted in
  // checkpoints (worker_idle).
  struct idle_worker {
    std::atomic<bool> waiting{false};
    worker_wake wake;
  };

 private:
  struct stripe;
  struct found {
    std::uint64_t* link = nullptr;  // the word that points to the item
    cp_item* item = nullptr;
  };

  // What the public constructor will do to an existing pool (the store's open, the image's
  // open, start()), on a private copy of the file: throws what the real open would, having
  // written nothing to the file.
  struct chain_totals {
    std::uint64_t items = 0, bytes = 0;
  };
  // What a rehearsal that opened an existing table found: every chain and free block valid,
  // these totals. The real open reads the same bytes (the same replay of the same file), so
  // it takes them instead of walking the chains again (300 ms at 1M items).
  using rehearsed = std::optional<chain_totals>;
  static rehearsed rehearse(const cpnvm_engine_options& options);
  static rehearsed rehearse_open(const cpnvm_engine_options& options);  // rehearse() without the advice added to damaged_pool
  void start();  // the table: created, or validated; then the CAS gap
  // The image allocator's bump pointer (damaged_pool naming the table's image when it is out of range).
  [[nodiscard]] std::uint64_t allocated_top() const;
  void create_table();
  void open_table();
  // Validates every chain: each problem goes to `problems`, or throws damaged_pool when null.
  chain_totals walk_chains(std::vector<std::string>* problems) const;

  [[nodiscard]] std::uint64_t hash_of(std::string_view key) const;
  stripe& stripe_of(std::uint64_t hash) const;
  std::uint64_t& bucket_of(std::uint64_t hash) const;
  [[nodiscard]] cp_item* item_at(std::uint64_t offset) const;
  [[nodiscard]] std::uint64_t offset_of(const void* p) const;
  [[nodiscard]] bool live(const cp_item& item, std::int64_t now) const;
  found find(std::uint64_t hash, std::string_view key) const;
  // A write's first steps: a checkpoint if this thread marked a lot (no lock is held yet),
  // then the key's stripe held exclusively and its live item (a dead one reclaimed).
  struct writer {
    std::uint64_t hash;
    stripe* s;
    std::unique_lock<sync::rw_spin_lock> held;
    found item;
  };
  writer begin_write(std::string_view key, std::int64_t now);
  // find(), and with the stripe held exclusively, an expired or flushed item is reclaimed.
  found find_live(std::uint64_t hash, std::string_view key, std::int64_t now);

  // Waiting workers: a thread about to force a checkpoint (sync, quiesce with marked lines,
  // stop) holds a forced_checkpoint over it, so a waiting worker that wakes quiesces and
  // takes part instead of waiting again.
  struct forced_checkpoint {
    explicit forced_checkpoint(cpnvm_engine& e);
    ~forced_checkpoint();
    forced_checkpoint(const forced_checkpoint&) = delete;
    forced_checkpoint& operator=(const forced_checkpoint&) = delete;
    cpnvm_engine& engine;
  };
  void wake_waiting();
  void stop_waiting(idle_worker& worker);

  void write(void* p, std::size_t n);  // marks [p, p + n) before the caller writes it
  void before_operation();             // a checkpoint first when this thread marked a lot
  void unlink(const found& f);         // out of its chain and back to the allocator
  void release(cp_item* item);         // an item no chain holds: counts, CLOCK bit, back to the allocator
  store_outcome put(stripe& s, std::uint64_t hash, const found& old, std::string_view key, std::string_view head,
                    std::string_view tail, std::uint32_t flags, std::int64_t expires_at, std::int64_t now);
  void* allocate_with_eviction(stripe& held, const cp_item* keep, std::size_t bytes);
  bool evict_one(stripe& held, const cp_item* keep, std::size_t block_bytes);
  std::uint64_t next_cas();
  [[nodiscard]] std::size_t max_block_bytes() const;
  void set_referenced(const cp_item* item, bool on) const;
  [[nodiscard]] bool referenced(const cp_item* item) const;

  static constexpr std::size_t stripe_count = 1024;
  cpnvm_engine_options options_;
  std::optional<ferrite::store> store_;
  std::shared_ptr<program_image> image_;
  std::byte* base_ = nullptr;       // the whole image: offsets count from here
  std::uint64_t image_bytes_ = 0;
  std::uint64_t first_offset_ = 0;  // where the image's data (after CpNvm's page) begin
  cp_table* table_ = nullptr;
  std::uint64_t* buckets_ = nullptr;
  std::uint64_t bucket_mask_ = 0;
  std::uint64_t seed_ = 0;
  std::uint64_t mark_budget_ = 0;   // bytes a thread marks before it checkpoints at once
  rehearsed validated_;               // set by the public constructor's rehearsal (open_table)
  bool opened_existing_ = false;      // open_table ran (not create_table)
  std::uint64_t epoch_at_start_ = 0;  // committed when the engine was ready (stats: checkpoints since)
  std::unique_ptr<stripe[]> stripes_;
  std::unique_ptr<std::atomic<std::uint8_t>[]> referenced_;  // CLOCK bits, one per 64-byte granule
  std::atomic<std::uint64_t> hand_{0};                       // CLOCK: the next bucket to look at
  std::mutex flush_lock_;                                    // the table's flush words
  flush_rule flushes_;
  item_counters counters_;
  std::mutex idle_workers_lock_;
  std::vector<std::shared_ptr<idle_worker>> idle_workers_;  // every worker given a wake
  std::atomic<unsigned> waiting_{0};  // of them, waiting for input still counted
  std::atomic<unsigned> wanted_{0};   // threads forcing a checkpoint now
  recovery_report report_;
};

}  // namespace ferrite::kv
