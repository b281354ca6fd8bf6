#include "cpnvm_engine.hpp"

#include "counter.hpp"
#include "cpnvm_table.hpp"
#include "key_hash.hpp"
#include "open_rehearsal.hpp"
#include "store_rules.hpp"

#include "ferrite/error.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <random>
#include <shared_mutex>

namespace ferrite::kv {

namespace {

constexpr std::string_view layout_name = "ferrite-kv-cpnvm-1";
constexpr std::string_view image_name = "kv";
constexpr std::string_view root_name = "ferrite-kv";
constexpr std::uint64_t cas_gap_at_open = std::uint64_t{1} << 32;

[[noreturn]] void damaged(const std::string& what) {
  throw_damaged(pool_errc::damaged_object, "kv table", std::string(image_name),
                what + "; nothing was changed: restore the pool from a copy");
}

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

// This thread's part in an engine: a thread may work for a few engines at once (a test, or
// the thread that opens a second engine).
struct worker_state {
  const void* engine = nullptr;
  std::optional<program_image::thread_scope> registered;
  std::optional<program_image::quiescent_scope> quiet;
  std::uint64_t marked = 0;  // bytes marked since this thread last took part in a checkpoint
  bool wrote = false;        // since the last batch_end
  std::shared_ptr<cpnvm_engine::idle_worker> idle;  // this worker as the others see it
};
thread_local std::array<worker_state, 4> worker_states;

worker_state* state_for(const void* engine) {
  for (auto& s : worker_states)
    if (s.engine == engine) return &s;
  return nullptr;
}

worker_state& me(const void* engine) {
  if (worker_state* s = state_for(engine)) return *s;
  throw usage_error("cpnvm engine: called from a thread that is not one of its workers (worker_started)");
}

}  // namespace

struct cpnvm_engine::stripe {
  sync::rw_spin_lock lock;
};

namespace {

unsigned image_threads(const cpnvm_engine_options& options) { return options.worker_threads + 1; }  // and the opening thread

// What the image and its thread logs take of the pool (its block on the buddy heap).
std::uint64_t image_part_bytes(const cpnvm_engine_options& options) {
  return std::bit_ceil(options.memory_bytes + image_threads(options) * options.log_bytes + (1u << 20));
}

image_options image_options_for(const cpnvm_engine_options& options) {
  image_options io;
  io.image_bytes = options.memory_bytes;
  io.max_threads = image_threads(options);
  io.log_bytes = options.log_bytes;
  io.interval = options.interval;
  return io;
}

// The image "kv" in `names`, opened, or created when missing.
std::shared_ptr<program_image> open_image(catalog& names, const cpnvm_engine_options& options) {
  try {
    return names.open<program_image>(image_name, image_options_for(options));
  } catch (const ferrite::out_of_memory&) {
    throw usage_error("cpnvm engine: the pool " + options.pool.string() + " cannot hold an image of " +
                      std::to_string(options.memory_bytes >> 20) + " MiB and " + std::to_string(image_threads(options)) +
                      " thread logs of " + std::to_string(options.log_bytes >> 20) + " MiB: remove it and give --size " +
                      std::to_string((2 * image_part_bytes(options)) >> 20) + "m or more (or leave --size out)");
  }
}

}  // namespace

cpnvm_engine::cpnvm_engine(const cpnvm_engine_options& options)
    : options_(options), stripes_(std::make_unique<stripe[]>(stripe_count)) {
  const auto began = std::chrono::steady_clock::now();
  if (options.log_bytes < (8u << 20)) throw usage_error("cpnvm engine: the thread logs need at least 8 MiB each");
  validated_ = rehearse(options);
  store_options layout;
  layout.size = options.size != 0 ? options.size : 2 * image_part_bytes(options) + (16u << 20);
  store_.emplace(ferrite::store::open_or_create(options.pool, layout_name, layout));
  report_.created = store_->created();
  report_.crashed = store_->recovered_from_crash();
  report_.pool_milliseconds = since(began);
  image_ = open_image(store_->names(), options);
  report_.index_milliseconds = since(began) - report_.pool_milliseconds;
  start();
  report_.milliseconds = since(began);
}

cpnvm_engine::cpnvm_engine(std::shared_ptr<program_image> image, const cpnvm_engine_options& options)
    : options_(options), image_(std::move(image)), stripes_(std::make_unique<stripe[]>(stripe_count)) {
  const auto began = std::chrono::steady_clock::now();
  start();
  report_.milliseconds = since(began);
}

cpnvm_engine::rehearsed cpnvm_engine::rehearse_open(const cpnvm_engine_options& options) {
  // The store's open writes before the table is checked (it replays the image's committed
  // epochs, marks the pool in use, and a crashed pool it recovered is marked clean when it
  // closes), and so does start() (the CAS gap, a checkpoint). So all of it runs first on a
  // copy-on-write mapping of the file: a damaged table is refused before anything is
  // written. That includes finishing a store whose setup looks unfinished and creating the
  // image when the catalog has none (what the real open would do, and may fail at). A
  // missing file has nothing to rehearse.
  const auto copy = open_rehearsal_copy(options.pool, layout_name);
  if (!copy) return std::nullopt;
  const cpnvm_engine trial(open_image(copy->names, options), options);
  if (!trial.opened_existing_) return std::nullopt;
  return chain_totals{trial.counters_.items.load(std::memory_order_relaxed),
                      trial.counters_.bytes.load(std::memory_order_relaxed)};
}

cpnvm_engine::rehearsed cpnvm_engine::rehearse(const cpnvm_engine_options& options) {
  return with_restore_advice([&] { return rehearse_open(options); });
}

void cpnvm_engine::start() {
  const std::span<const std::byte> whole = image_->whole_image();
  base_ = const_cast<std::byte*>(whole.data());
  image_bytes_ = whole.size();
  first_offset_ = offset_of(image_->data());
  referenced_ = std::make_unique<std::atomic<std::uint8_t>[]>(image_bytes_ / 64);
  {
    // The opening thread writes the table too; it stops being a worker however this ends
    // (before image_ goes, should the open fail).
    worker_started({});
    const struct opening_worker {
      cpnvm_engine* engine;
      ~opening_worker() { engine->worker_stopping(); }
    } opening{this};
    table_ = static_cast<cp_table*>(image_->root(root_name));
    if (table_ == nullptr) {
      // The table and its root commit in one epoch, the image's first allocations: an image
      // that has allocated anything has its table, so a missing root is damage (a create
      // here would drop every item).
      if (allocated_top() != first_offset_) damaged("the image holds data but no root '" + std::string(root_name) + "'");
      create_table();
    } else {
      open_table();
    }
    mark_budget_ = table_->log_bytes / 4;
    image_->sync();
  }
  epoch_at_start_ = image_->committed_epoch();
}

cpnvm_engine::~cpnvm_engine() {
  worker_stopping();  // the destroying thread, if it was a worker still
  image_.reset();
  if (store_) store_->close();
}

// ---- open and create ------------------------------------------------------------------

void cpnvm_engine::create_table() {
  // Everything below commits in one epoch with the root: a crash before it leaves an image
  // with no root, and the next open creates the table again.
  std::random_device entropy;
  const std::uint64_t want = std::max<std::uint64_t>(stripe_count, std::bit_floor(image_bytes_ / 256));
  auto* table = static_cast<cp_table*>(image_->allocate(sizeof(cp_table)));
  // In a new image the bucket array comes from fresh memory, zero in the volatile and the
  // persistent image alike: it is not marked (a large one would not fit a thread's log).
  // Only if it came back non-zero (the image had freed blocks) is it cleared and marked.
  const std::size_t array_bytes = want * sizeof(std::uint64_t);
  auto* buckets = static_cast<std::uint64_t*>(image_->allocate(array_bytes, false));
  if (std::any_of(buckets, buckets + want, [](std::uint64_t w) { return w != 0; })) {
    write(buckets, array_bytes);
    std::memset(buckets, 0, array_bytes);
  }
  std::memset(static_cast<void*>(table), 0, sizeof(cp_table));
  table->magic = cp_table::magic_value;
  table->version = 1;
  table->bucket_count = want;
  table->buckets = offset_of(buckets);
  table->seed = (std::uint64_t{entropy()} << 32) | entropy();
  table->worker_threads = options_.worker_threads;
  table->log_bytes = options_.log_bytes;
  table->identity_check = table->identity();
  image_->set_root(root_name, table);
  table_ = table;
  buckets_ = buckets;
  bucket_mask_ = want - 1;
  seed_ = table->seed;
}

void cpnvm_engine::open_table() {
  const std::uint64_t table_offset = offset_of(table_);
  if (table_offset % 64 != 0 || table_offset < first_offset_ || image_bytes_ - table_offset < sizeof(cp_table))
    damaged("the table root names offset " + std::to_string(table_offset));
  const cp_table& t = *table_;
  if (t.magic != cp_table::magic_value) damaged("the table has no valid magic");
  if (t.identity_check != t.identity()) damaged("the table's identity check does not match");
  if (t.version != 1) damaged("the table has version " + std::to_string(t.version) + ", this build reads 1");
  if (t.bucket_count < stripe_count || !std::has_single_bit(t.bucket_count) || t.bucket_count > image_bytes_ / 8)
    damaged("the table has " + std::to_string(t.bucket_count) + " buckets");
  if (t.buckets % 8 != 0 || t.buckets < first_offset_ || t.buckets > image_bytes_ ||
      image_bytes_ - t.buckets < t.bucket_count * 8)
    damaged("the bucket array at offset " + std::to_string(t.buckets) + " is not inside the image");
  if (t.log_bytes < 4096 || t.log_bytes > (std::uint64_t{1} << 40))
    damaged("the table records thread logs of " + std::to_string(t.log_bytes) + " bytes");
  if (t.worker_threads < options_.worker_threads)
    throw usage_error("cpnvm engine: the pool " + options_.pool.string() + " was created for " +
                      std::to_string(t.worker_threads) + " worker threads; run with -t " +
                      std::to_string(t.worker_threads) + " or fewer");
  buckets_ = reinterpret_cast<std::uint64_t*>(base_ + t.buckets);
  bucket_mask_ = t.bucket_count - 1;
  seed_ = t.seed;
  opened_existing_ = true;
  const chain_totals totals = validated_ ? *validated_ : walk_chains(nullptr);
  counters_.items.store(totals.items, std::memory_order_relaxed);
  counters_.bytes.store(totals.bytes, std::memory_order_relaxed);
  report_.items = totals.items;
  // Ids of a lost epoch may have reached clients: continue well above them.
  write(&table_->last_cas, sizeof table_->last_cas);
  table_->last_cas += cas_gap_at_open;
  if (t.flush_cas_limit != 0) flushes_.flush_now(t.flush_cas_limit);
  if (t.flush_at != 0) flushes_.flush_at(t.flush_at);
}

std::uint64_t cpnvm_engine::allocated_top() const {
  try {
    return image_->allocated_top();
  } catch (const damaged_pool& e) {
    damaged(std::string("the image's allocator: ") + e.what());
  }
}

cpnvm_engine::chain_totals cpnvm_engine::walk_chains(std::vector<std::string>* problems) const {
  // Every hop is checked before it is followed. One bit per 64-byte granule of the image
  // marks the blocks of the table, the bucket array and every item seen (the whole block its
  // lengths take), so that a cycle, an item in two chains or items that overlap are found;
  // then every block of the allocator's free lists must lie outside them all and below the
  // bump pointer, or a later allocation would hand out an item's bytes.
  chain_totals totals;
  const auto report = [&](const std::string& what) {
    if (problems == nullptr) damaged(what);
    problems->push_back(what);
  };
  std::vector<bool> seen(image_bytes_ / 64);
  const auto claim = [&](std::uint64_t at, std::uint64_t bytes) {  // false: a granule is taken
    const std::uint64_t first = at / 64, end = (at + bytes + 63) / 64;
    for (std::uint64_t g = first; g < end; ++g)
      if (seen[g]) return false;
    for (std::uint64_t g = first; g < end; ++g) seen[g] = true;
    return true;
  };
  const std::uint64_t top = allocated_top();
  (void)claim(offset_of(table_), sizeof(cp_table));
  if (!claim(table_->buckets, program_image::block_bytes((bucket_mask_ + 1) * sizeof(std::uint64_t))))
    report("the bucket array at offset " + std::to_string(table_->buckets) + " overlaps the table");
  for (std::uint64_t b = 0; b <= bucket_mask_; ++b) {
    for (std::uint64_t at = buckets_[b]; at != 0;) {
      const std::string where = "bucket " + std::to_string(b) + ": the item at offset " + std::to_string(at);
      if (at % 64 != 0 || at < first_offset_ || at > top || top - at < sizeof(cp_item)) {
        report(where + " is not an item's place in the image");
        break;
      }
      const cp_item& item = *item_at(at);
      if (item.key_length == 0 || item.key_length > max_key_length || item.value_length > largest_item_limit ||
          top - at < program_image::block_bytes(cp_item::bytes_for(item.key_length, item.value_length))) {
        report(where + " has lengths that do not fit (key " + std::to_string(item.key_length) + ", value " +
               std::to_string(item.value_length) + ")");
        break;
      }
      if (item.hash != hash_of(item.key()) || (item.hash & bucket_mask_) != b) {
        report(where + " is in the wrong bucket or its key does not hash to its hash");
        break;
      }
      if (!claim(at, program_image::block_bytes(cp_item::bytes_for(item.key_length, item.value_length)))) {
        report(where + " is reached twice (a cycle, or two chains share it) or overlaps another item or the table");
        break;
      }
      ++totals.items;
      totals.bytes += item.key_length + item.value_length;
      at = item.next;
    }
  }
  std::vector<program_image::free_block> free;
  try {
    free = image_->free_blocks();
  } catch (const damaged_pool& e) {
    report(std::string("the image's allocator: ") + e.what());
  }
  for (const auto& block : free) {
    if (!claim(block.offset, block.bytes)) {
      report("the allocator's free block at offset " + std::to_string(block.offset) + " (" +
             std::to_string(block.bytes) + " bytes) overlaps an item, the table or another free block");
      break;
    }
  }
  return totals;
}

std::vector<std::string> cpnvm_engine::check_items() const {
  std::vector<std::string> problems;
  const std::uint64_t items = walk_chains(&problems).items;
  if (problems.empty() && items != counters_.items.load(std::memory_order_relaxed))
    problems.push_back("the chains hold " + std::to_string(items) + " items, the count says " +
                       std::to_string(counters_.items.load(std::memory_order_relaxed)));
  return problems;
}

// ---- worker threads ---------------------------------------------------------------------

void cpnvm_engine::worker_started(worker_wake wake) {
  if (state_for(this) != nullptr) throw usage_error("cpnvm engine: this thread is a worker already");
  worker_state* slot = state_for(nullptr);
  if (slot == nullptr) throw usage_error("cpnvm engine: a thread can work for at most 4 engines at once");
  slot->registered.emplace(image_->register_thread());
  slot->engine = this;
  slot->marked = 0;
  slot->wrote = false;
  slot->idle.reset();
  if (wake) {
    slot->idle = std::make_shared<idle_worker>();
    slot->idle->wake = std::move(wake);
    const std::lock_guard held(idle_workers_lock_);
    idle_workers_.push_back(slot->idle);
  }
}

void cpnvm_engine::worker_stopping() {
  worker_state* slot = state_for(this);
  if (slot == nullptr) return;
  if (slot->idle) {
    stop_waiting(*slot->idle);
    const std::lock_guard held(idle_workers_lock_);
    std::erase(idle_workers_, slot->idle);
    slot->idle.reset();
  }
  {
    std::optional<forced_checkpoint> forcing;
    if (slot->marked > 0) forcing.emplace(*this);
    slot->quiet.reset();
    slot->registered.reset();  // takes part in a checkpoint first if it marked anything
  }
  slot->engine = nullptr;
}

void cpnvm_engine::batch_begin() {
  worker_state& w = me(this);
  if (w.idle) stop_waiting(*w.idle);
  w.quiet.reset();  // counted in checkpoints again (waits while one is under way)
}

void cpnvm_engine::batch_end() {
  worker_state& w = me(this);
  if (options_.mode == durability::sync && w.wrote) {
    const forced_checkpoint forcing(*this);
    image_->sync();
    w.marked = 0;
  } else {
    // A worker waiting for input is still counted: wake it when the interval's checkpoint is
    // due, rather than wait at the barrier until its timer fires.
    if (waiting_.load() > 0 && image_->until_checkpoint_due().count() <= 0) wake_waiting();
    if (image_->checkpoint()) w.marked = 0;
  }
  w.wrote = false;
}

std::optional<std::chrono::nanoseconds> cpnvm_engine::worker_idle() {
  // With marked lines and no checkpoint due, an epoch-mode worker waits still counted, until
  // the interval's checkpoint is due, and takes part in it then (or sooner, woken by a thread
  // that needs one). Forcing a checkpoint of its own at every idle moment made one every
  // 0.3 ms under a depth-1 load of sets (3,400 a second at 64 ms epochs) and cost the engine
  // a sixth of its throughput. Otherwise it quiesces: it takes part in a checkpoint that is
  // due, forces one if it has marked lines, and no checkpoint waits for it meanwhile.
  worker_state& w = me(this);
  if (options_.mode == durability::epoch && w.idle && !w.quiet && w.marked > 0) {
    if (!w.idle->waiting.exchange(true)) waiting_.fetch_add(1);
    // Set before these checks (all seq_cst): a thread that wants a checkpoint raises
    // wanted_ and then looks for waiting workers, so one of the two sees the other.
    const std::chrono::nanoseconds left = image_->until_checkpoint_due();
    if (wanted_.load() == 0 && left.count() > 0) return left;
    stop_waiting(*w.idle);
  }
  if (!w.quiet) {
    std::optional<forced_checkpoint> forcing;
    if (w.marked > 0) forcing.emplace(*this);
    w.quiet.emplace(image_->quiesce());
  }
  w.marked = 0;
  return std::nullopt;
}

void cpnvm_engine::stop_waiting(idle_worker& worker) {
  if (worker.waiting.exchange(false)) waiting_.fetch_sub(1);
}

void cpnvm_engine::wake_waiting() {
  const std::lock_guard held(idle_workers_lock_);
  for (const auto& worker : idle_workers_)
    if (worker->waiting.exchange(false)) {
      waiting_.fetch_sub(1);
      worker->wake();
    }
}

cpnvm_engine::forced_checkpoint::forced_checkpoint(cpnvm_engine& e) : engine(e) {
  engine.wanted_.fetch_add(1);
  if (engine.waiting_.load() > 0) engine.wake_waiting();
}

cpnvm_engine::forced_checkpoint::~forced_checkpoint() { engine.wanted_.fetch_sub(1); }

void cpnvm_engine::before_operation() {
  worker_state& w = me(this);
  if (w.marked > mark_budget_) {  // no lock is held here: a checkpoint may run
    const forced_checkpoint forcing(*this);
    image_->sync();
    w.marked = 0;
  }
}

void cpnvm_engine::write(void* p, std::size_t n) {
  image_->mark(p, n);
  worker_state& w = me(this);
  w.marked += n + 64;
  w.wrote = true;
}

// ---- the table ----------------------------------------------------------------------------

std::uint64_t cpnvm_engine::hash_of(std::string_view key) const { return seeded_key_hash(key, seed_); }
cpnvm_engine::stripe& cpnvm_engine::stripe_of(std::uint64_t hash) const { return stripes_[hash & (stripe_count - 1)]; }
std::uint64_t& cpnvm_engine::bucket_of(std::uint64_t hash) const { return buckets_[hash & bucket_mask_]; }
cp_item* cpnvm_engine::item_at(std::uint64_t offset) const { return reinterpret_cast<cp_item*>(base_ + offset); }
std::uint64_t cpnvm_engine::offset_of(const void* p) const {
  return static_cast<std::uint64_t>(static_cast<const std::byte*>(p) - base_);
}

void cpnvm_engine::set_referenced(const cp_item* item, bool on) const {
  referenced_[offset_of(item) / 64].store(on ? 1 : 0, std::memory_order_relaxed);
}
bool cpnvm_engine::referenced(const cp_item* item) const {
  return referenced_[offset_of(item) / 64].load(std::memory_order_relaxed) != 0;
}

bool cpnvm_engine::live(const cp_item& item, std::int64_t now) const {
  return !is_expired(item.expires_at, now) && !flushes_.flushed(item.cas, item.stored_at, now);
}

cpnvm_engine::found cpnvm_engine::find(std::uint64_t hash, std::string_view key) const {
  for (std::uint64_t* link = &bucket_of(hash); *link != 0;) {
    cp_item* item = item_at(*link);
    if (item->hash == hash && item->key() == key) return {link, item};
    link = &item->next;
  }
  return {};
}

cpnvm_engine::found cpnvm_engine::find_live(std::uint64_t hash, std::string_view key, std::int64_t now) {
  const found f = find(hash, key);
  if (f.item == nullptr || live(*f.item, now)) return f;
  if (!referenced(f.item)) counters_.expired_unfetched.fetch_add(1, std::memory_order_relaxed);
  counters_.reclaimed.fetch_add(1, std::memory_order_relaxed);
  unlink(f);
  return {};
}

void cpnvm_engine::unlink(const found& f) {
  write(f.link, sizeof *f.link);
  *f.link = f.item->next;
  release(f.item);
}

void cpnvm_engine::release(cp_item* item) {
  counters_.items.fetch_sub(1, std::memory_order_relaxed);
  counters_.bytes.fetch_sub(item->key_length + item->value_length, std::memory_order_relaxed);
  set_referenced(item, false);
  me(this).marked += 64;
  // Marks the block's first word and the free list head.
  image_->deallocate(item, cp_item::bytes_for(item->key_length, item->value_length));
}

std::size_t cpnvm_engine::max_block_bytes() const {
  // A block the allocator reuses, and one that a thread's log holds with room to spare.
  return std::min<std::size_t>(program_image::max_reused_block, mark_budget_);
}

std::uint64_t cpnvm_engine::next_cas() {
  write(&table_->last_cas, sizeof table_->last_cas);
  return std::atomic_ref<std::uint64_t>(table_->last_cas).fetch_add(1, std::memory_order_relaxed) + 1;
}

bool cpnvm_engine::evict_one(stripe& held, const cp_item* keep, std::size_t block_bytes) {
  // CLOCK over the buckets: a referenced item gets its bit cleared and a second chance; the
  // first unreferenced item whose block is of the wanted size class goes (a block of another
  // class would not make room). Dead items of any size go as they are passed. Other stripes
  // are tried without waiting for their locks; `keep` (the item a store replaces, whose
  // bytes it may still copy) never goes.
  const std::uint64_t limit = std::min<std::uint64_t>(2 * (bucket_mask_ + 1), std::uint64_t{1} << 20);
  const std::int64_t now = unix_now();
  for (std::uint64_t step = 0; step < limit; ++step) {
    const std::uint64_t b = hand_.fetch_add(1, std::memory_order_relaxed) & bucket_mask_;
    stripe& s = stripes_[b & (stripe_count - 1)];
    const bool mine = &s == &held;
    if (!mine && !s.lock.try_lock()) continue;
    bool freed = false;
    for (std::uint64_t* link = &buckets_[b]; *link != 0 && !freed;) {
      cp_item* item = item_at(*link);
      const bool fits = program_image::block_bytes(cp_item::bytes_for(item->key_length, item->value_length)) == block_bytes;
      if (item == keep) {
        link = &item->next;
      } else if (!live(*item, now)) {
        counters_.reclaimed.fetch_add(1, std::memory_order_relaxed);
        freed = fits;
        unlink({link, item});  // *link is the next item now
      } else if (referenced(item)) {
        set_referenced(item, false);
        link = &item->next;
      } else if (fits) {
        counters_.evictions.fetch_add(1, std::memory_order_relaxed);
        freed = true;
        unlink({link, item});
      } else {
        link = &item->next;
      }
    }
    if (!mine) s.lock.unlock();
    if (freed) return true;
  }
  return false;
}

void* cpnvm_engine::allocate_with_eviction(stripe& held, const cp_item* keep, std::size_t bytes) {
  const std::size_t block = program_image::block_bytes(bytes);
  for (;;) {
    if (void* p = image_->try_allocate(bytes)) {
      worker_state& w = me(this);
      w.marked += block;
      w.wrote = true;
      return p;
    }
    if (!options_.evict || !evict_one(held, keep, block)) return nullptr;
  }
}

store_outcome cpnvm_engine::put(stripe& s, std::uint64_t hash, const found& old, std::string_view key,
                                std::string_view head, std::string_view tail, std::uint32_t flags,
                                std::int64_t expires_at, std::int64_t now) {
  const std::size_t value_length = head.size() + tail.size();
  const std::size_t bytes = cp_item::bytes_for(key.size(), value_length);
  if (key.size() + value_length > options_.max_item_bytes || bytes > max_block_bytes())
    return {store_result::too_large, 0};
  auto* item = static_cast<cp_item*>(allocate_with_eviction(s, old.item, bytes));
  if (item == nullptr) return {store_result::out_of_memory, 0};
  // Eviction may have unlinked the item before the old one in its chain: find its link again.
  const found current = old.item != nullptr ? find(hash, key) : found{};
  item->hash = hash;
  item->cas = next_cas();
  item->stored_at = now;
  item->expires_at = expires_at;
  item->flags = flags;
  item->key_length = static_cast<std::uint32_t>(key.size());
  item->value_length = static_cast<std::uint32_t>(value_length);
  item->reserved = 0;
  std::memcpy(item->payload(), key.data(), key.size());
  if (!head.empty()) std::memcpy(item->payload() + key.size(), head.data(), head.size());
  if (!tail.empty()) std::memcpy(item->payload() + key.size() + head.size(), tail.data(), tail.size());
  std::uint64_t* link = current.item != nullptr ? current.link : &bucket_of(hash);
  item->next = current.item != nullptr ? current.item->next : *link;
  write(link, sizeof *link);
  *link = offset_of(item);
  if (current.item != nullptr) release(current.item);
  counters_.items.fetch_add(1, std::memory_order_relaxed);
  counters_.bytes.fetch_add(key.size() + value_length, std::memory_order_relaxed);
  counters_.total_items.fetch_add(1, std::memory_order_relaxed);
  return {store_result::stored, item->cas, current.item != nullptr};
}

// ---- the engine interface ---------------------------------------------------------------

cpnvm_engine::writer cpnvm_engine::begin_write(std::string_view key, std::int64_t now) {
  before_operation();
  const std::uint64_t hash = hash_of(key);
  stripe& s = stripe_of(hash);
  std::unique_lock held(s.lock);
  const found item = find_live(hash, key, now);
  return {hash, &s, std::move(held), item};
}

bool cpnvm_engine::get(std::string_view key, std::int64_t now, std::optional<std::int64_t> new_expires,
                       const item_reader& read) {
  if (new_expires) {
    const writer w = begin_write(key, now);
    const found& f = w.item;
    if (f.item == nullptr) return false;
    write(&f.item->expires_at, sizeof f.item->expires_at);
    f.item->expires_at = *new_expires;
    set_referenced(f.item, true);
    const cp_item& item = *f.item;
    read(item_view{item.key(), item.value(), item.flags, item.expires_at, item.cas});
    return true;
  }
  const std::uint64_t hash = hash_of(key);
  std::shared_lock held(stripe_of(hash).lock);
  const found f = find(hash, key);
  if (f.item == nullptr || !live(*f.item, now)) return false;  // a dead one is reclaimed by the next write
  set_referenced(f.item, true);
  const cp_item& item = *f.item;
  read(item_view{item.key(), item.value(), item.flags, item.expires_at, item.cas});
  return true;
}

store_outcome cpnvm_engine::store(const store_request& request, std::int64_t now) {
  const writer w = begin_write(request.key, now);
  const found& old = w.item;
  stripe& s = *w.s;
  const std::uint64_t hash = w.hash;
  if (const auto refused = store_refusal(request, old.item != nullptr, old.item != nullptr ? old.item->cas : 0)) {
    if (*refused == store_result::not_stored && old.item != nullptr) set_referenced(old.item, true);
    return {*refused, 0};
  }
  if (request.mode == store_mode::append) {
    return put(s, hash, old, request.key, old.item->value(), request.value, old.item->flags, old.item->expires_at, now);
  }
  if (request.mode == store_mode::prepend) {
    return put(s, hash, old, request.key, request.value, old.item->value(), old.item->flags, old.item->expires_at, now);
  }
  return put(s, hash, old, request.key, request.value, {}, request.flags, request.expires_at, now);
}

remove_result cpnvm_engine::remove(std::string_view key, std::uint64_t compare_cas, std::int64_t now) {
  const writer w = begin_write(key, now);
  const found& f = w.item;
  if (f.item == nullptr) return remove_result::not_found;
  if (compare_cas != 0 && f.item->cas != compare_cas) return remove_result::exists;
  unlink(f);
  return remove_result::deleted;
}

touch_result cpnvm_engine::touch(std::string_view key, std::int64_t expires_at, std::int64_t now) {
  const writer w = begin_write(key, now);
  const found& f = w.item;
  if (f.item == nullptr) return touch_result::not_found;
  write(&f.item->expires_at, sizeof f.item->expires_at);
  f.item->expires_at = expires_at;
  set_referenced(f.item, true);
  return touch_result::touched;
}

arith_outcome cpnvm_engine::arith(const arith_request& request, std::int64_t now) {
  const writer w = begin_write(request.key, now);
  const found& f = w.item;
  stripe& s = *w.s;
  const std::uint64_t hash = w.hash;
  if (f.item == nullptr) {
    if (!request.vivify_expires) return {arith_result::not_found};
    const std::string text = std::to_string(request.initial);
    const store_outcome made = put(s, hash, {}, request.key, text, {}, 0, *request.vivify_expires, now);
    if (made.result != store_result::stored) return {arith_result::not_found};
    return {arith_result::ok, request.initial, made.cas, *request.vivify_expires};
  }
  if (request.compare_cas != 0 && f.item->cas != request.compare_cas) return {arith_result::exists};
  const std::optional<std::uint64_t> value = parse_counter(f.item->value());
  if (!value) return {arith_result::non_numeric};
  const std::uint64_t next = apply_delta(*value, request.increment, request.delta);
  const std::int64_t expires_at = request.new_expires.value_or(f.item->expires_at);
  const store_outcome made = put(s, hash, f, request.key, std::to_string(next), {}, f.item->flags, expires_at, now);
  if (made.result != store_result::stored) return {arith_result::not_found};
  return {arith_result::ok, next, made.cas, expires_at};
}

void cpnvm_engine::flush(std::int64_t at, std::int64_t now) {
  before_operation();
  std::lock_guard held(flush_lock_);
  write(&table_->flush_cas_limit, 16);
  if (at <= now) {
    const std::uint64_t last = std::atomic_ref<std::uint64_t>(table_->last_cas).load(std::memory_order_relaxed);
    table_->flush_cas_limit = std::max(table_->flush_cas_limit, last);
    flushes_.flush_now(last);
  } else {
    table_->flush_at = at;
    flushes_.flush_at(at);
  }
}

engine_stats cpnvm_engine::stats() const {
  engine_stats held = counters_.snapshot(image_->size());
  held.durable_epoch = image_->committed_epoch();
  held.checkpoints = *held.durable_epoch - epoch_at_start_;
  return held;
}

}  // namespace ferrite::kv
