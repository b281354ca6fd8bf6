// The soft engine (soft_engine.hpp has the layout, the write order and the recovery).
#include "soft_engine.hpp"

#include "counter.hpp"
#include "open_rehearsal.hpp"
#include "store_rules.hpp"

#include "ferrite/containers/sets_kind.hpp"
#include "ferrite/error.hpp"
#include "ferrite/pmem/primitives.hpp"
#include "ferrite/sync/rw_spin_lock.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <new>
#include <numeric>
#include <random>
#include <thread>
#include <string>
#include <vector>

namespace ferrite::kv {

struct soft_engine::kv_root {
  static constexpr std::uint64_t magic_value = 0x31544f4f52564b46ull;  // "FKVROOT1"
  std::uint64_t magic;        // written last when the root is formatted
  std::uint64_t version;
  std::uint64_t seeds[2];
  std::uint64_t heap_offset;  // the item heap, from the pool's start
  std::uint64_t heap_size;
  std::uint64_t checksum;     // over version .. heap_size
  std::uint64_t unused;
  alignas(64) std::uint64_t cas_high_water;  // no CAS id above it was handed out
  std::uint64_t flush_cas_limit;             // items with a CAS id up to it are flushed
  std::int64_t flush_at;                     // items stored up to it die when it comes (0: none)

  [[nodiscard]] std::uint64_t identity_checksum() const {
    return pmem::fnv1a64(&version, reinterpret_cast<const std::byte*>(&checksum) -
                                       reinterpret_cast<const std::byte*>(&version));
  }
};

namespace {

constexpr std::uint64_t root_bytes = 4096;  // the kv root, then the item heap
constexpr std::string_view layout_name = "ferrite-kv-1";

struct ring_entry {
  key_digest digest;
  std::uint64_t offset;
};

[[noreturn]] void damaged(const std::string& what) {
  throw_damaged(pool_errc::damaged_object, "kv items", "", what + "; nothing was changed: restore the pool from a copy");
}

store_options layout_for(const soft_engine_options& o) {
  // A quarter for the index (the SOFT map's nodes: about 64 bytes a key), the rest for items.
  const std::uint64_t index_bytes = std::max<std::uint64_t>(16ull << 20, (o.size / 4) & ~std::uint64_t{63});
  if (o.size < index_bytes + (16ull << 20)) {
    throw usage_error("ferrite-kv: --size " + std::to_string(o.size >> 20) + " MiB is too small: give at least " +
                      std::to_string((index_bytes + (32ull << 20)) >> 20) + " MiB");
  }
  store_options s;
  s.size = o.size;
  s.heap_size = index_bytes;
  s.user_bytes = o.size - index_bytes - (1ull << 20);  // the pool header and the catalog's share
  return s;
}

}  // namespace

struct soft_engine::stripe {
  FERRITE_FLOW_SKIP sync::rw_spin_lock lock;  // waits through pmem::wait_hint: the crash simulator can schedule around it
  FERRITE_FLOW_SKIP std::deque<ring_entry> ring;  // CLOCK order: oldest first; stale entries are skipped
  FERRITE_FLOW_SKIP std::size_t live = 0;
  FERRITE_FLOW_SKIP std::uint64_t next_cas = 0, cas_end = 0, cas_generation = 0;  // the reserved range (next_cas, cas_end]
};

soft_engine::soft_engine(const soft_engine_options& options)
    : options_(options),
      owned_((rehearse(options), ferrite::store::open_or_create(options.pool, layout_name, layout_for(options)))),
      pool_(&owned_->pool()),
      names_(&owned_->names()),
      area_(owned_->user_area()),
      stripes_(std::make_unique<stripe[]>(stripe_count)) {
  report_.created = owned_->created();
  report_.crashed = owned_->recovered_from_crash();
  start();
}

soft_engine::soft_engine(pmem::pool& pool, catalog& names, std::span<std::byte> area, const soft_engine_options& options,
                         rehearsal_tag)
    : options_(options), pool_(&pool), names_(&names), area_(area), rehearsal_(true),
      stripes_(std::make_unique<stripe[]>(stripe_count)) {
  start();
}

void soft_engine::rehearse_open(const soft_engine_options& options) {
  // The store's open writes before the engine's checks (it recovers the catalog and the
  // index of a crashed pool, marks the pool in use), and so does start() (the item heap's
  // undo log and frees, the index's recovery). So all of it runs first on a copy-on-write
  // mapping of the file, with the item heap's whole check at the end: a damaged pool is
  // refused before anything is written. That includes finishing a store whose setup looks
  // unfinished (as the real open does). A missing file has nothing to rehearse.
  const auto copy = open_rehearsal_copy(options.pool, layout_name);
  if (!copy) return;
  const std::uint64_t root = copy->pool.state().root_offset, heap_at = copy->pool.heap_offset();
  const std::span<std::byte> area = root == 0 || heap_at <= root ? std::span<std::byte>{}
                                                                 : std::span<std::byte>{copy->pool.base() + root, heap_at - root};
  const soft_engine trial(copy->pool, copy->names, area, options, rehearsal_tag{});
}

void soft_engine::rehearse(const soft_engine_options& options) {
  with_restore_advice([&] { rehearse_open(options); });
}

soft_engine::soft_engine(pmem::pool& pool, catalog& names, std::span<std::byte> area, const soft_engine_options& options)
    : options_(options), pool_(&pool), names_(&names), area_(area), stripes_(std::make_unique<stripe[]>(stripe_count)) {
  start();
}

void soft_engine::start() {
  const auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
  };
  report_.pool_milliseconds = since(began_);
  if (area_.size() < root_bytes + (64 << 10)) {
    damaged("the user area has " + std::to_string(area_.size()) + " bytes, too few for a kv root and an item heap");
  }
  root_ = reinterpret_cast<kv_root*>(area_.data());
  if (root_->magic == 0) {
    // A root with no magic is one whose format a crash cut short, unless the index exists:
    // the index is created only after the magic is durable, so then the magic was lost (a
    // damaged pool), and formatting again would silently drop every item.
    for (const auto& object : names_->list()) {
      if (object.name == "items") damaged("the kv root's magic is zero but the index of items exists");
    }
    format_root();
  }
  open_items();
  const auto objects = names_->list();
  if (std::none_of(objects.begin(), objects.end(), [](const object_info& o) { return o.name == "items"; })) {
    // The index is created right after the root is formatted, before any item is stored: an
    // item heap that holds blocks while the index is missing lost its index (a damaged
    // catalog), and creating an empty one would free every item.
    const auto blocks = items_->blocks();
    if (std::any_of(blocks.begin(), blocks.end(),
                    [](const alloc::block_info& b) { return b.state != alloc::block_state::free; })) {
      damaged("the item heap holds items but the catalog has no index of them ('items')");
    }
  }
  recover_items();
  report_.milliseconds = since(began_);
}

soft_engine::~soft_engine() {
  index_.reset();
  items_.reset();
  if (owned_) owned_->close();
}

void soft_engine::format_root() {
  // Nothing refers to the item heap until the magic is durable: a crash before it formats again.
  const std::uint64_t heap_offset = static_cast<std::uint64_t>(area_.data() - pool_->base()) + root_bytes;
  const std::uint64_t heap_size = (area_.size() - root_bytes) & ~std::uint64_t{63};
  (void)alloc::buddy_heap::create(*pool_, heap_offset, heap_size);
  std::random_device entropy;
  root_->version = 1;
  root_->seeds[0] = (std::uint64_t{entropy()} << 32) | entropy();
  root_->seeds[1] = (std::uint64_t{entropy()} << 32) | entropy();
  root_->heap_offset = heap_offset;
  root_->heap_size = heap_size;
  root_->checksum = root_->identity_checksum();
  root_->cas_high_water = 0;
  root_->flush_cas_limit = 0;
  root_->flush_at = 0;
  pmem::pwb_range(root_, sizeof(kv_root));
  pmem::pfence();
  root_->magic = kv_root::magic_value;
  pmem::pwb(&root_->magic);
  pmem::pfence();
}

void soft_engine::open_items() {
  const std::uint64_t area_start = static_cast<std::uint64_t>(area_.data() - pool_->base());
  if (root_->magic != kv_root::magic_value) damaged("the kv root has no valid magic");
  if (root_->checksum != root_->identity_checksum()) damaged("the kv root's checksum does not match");
  if (root_->version != 1) damaged("the kv root has version " + std::to_string(root_->version) + ", this build reads 1");
  if (root_->heap_offset != area_start + root_bytes || root_->heap_size > area_.size() - root_bytes) {
    damaged("the kv root places the item heap outside its area");
  }
  items_.reset(new alloc::buddy_heap(alloc::buddy_heap::open(*pool_, root_->heap_offset)));
  granules_ = root_->heap_size / 64;
  referenced_ = std::make_unique<std::atomic<std::uint8_t>[]>(granules_);
}

void soft_engine::recover_items() {
  items_->recover();
  durable_set_options index_options;
  index_options.recovery_threads = options_.recovery_threads;
  index_options.area_bytes = options_.index_area_bytes;
  const auto index_began = std::chrono::steady_clock::now();
  index_ = names_->open_map<key_digest, std::uint64_t>("items", index_options);
  report_.index_milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - index_began).count();

  // Pass 1, reads only: every indexed item is checked before anything is written. The
  // index's entries are sorted by offset and merged with the heap's block list (both in
  // address order), so the items are read in address order and no per-item heap lookup is
  // needed; the items' checks then run on the recovery threads.
  const std::array<std::uint64_t, 2> seeds{root_->seeds[0], root_->seeds[1]};
  std::vector<ring_entry> indexed;
  indexed.reserve(index_->size());
  index_->for_each_at_rest([&](const key_digest& digest, const std::uint64_t& offset) {
    if (offset >= root_->heap_size) damaged("the item at heap offset " + std::to_string(offset) + " lies outside the item heap");
    indexed.push_back({digest, offset});
  });
  std::sort(indexed.begin(), indexed.end(), [](const ring_entry& a, const ring_entry& b) { return a.offset < b.offset; });

  std::vector<std::uint64_t> block_bytes(indexed.size());
  std::vector<void*> confirm, leftovers;
  std::size_t next = 0;
  for (const alloc::block_info& block : items_->blocks()) {
    if (next < indexed.size() && indexed[next].offset < block.offset) break;  // not a block start: reported below
    const bool in_index = next < indexed.size() && indexed[next].offset == block.offset;
    if (in_index) {
      if (block.state != alloc::block_state::live && block.state != alloc::block_state::allocation_pending) {
        damaged("the item at heap offset " + std::to_string(block.offset) + " is not an allocated block (" +
                alloc::to_string(block.state) + ")");
      }
      block_bytes[next] = std::uint64_t{1} << block.order;
      if (block.state == alloc::block_state::allocation_pending) confirm.push_back(items_->at(block.offset));
      ++next;
      if (next < indexed.size() && indexed[next].offset == block.offset) {
        damaged("two index entries name the item at heap offset " + std::to_string(block.offset));
      }
    } else if (block.state == alloc::block_state::live || block.state == alloc::block_state::allocation_pending) {
      // An item no index entry names: a store or delete a crash cut short. A pending one is
      // freed by finish_recovery.
      if (block.state == alloc::block_state::live) leftovers.push_back(items_->at(block.offset));
      ++report_.freed_leftovers;
    }
  }
  if (next < indexed.size()) {
    damaged("the item at heap offset " + std::to_string(indexed[next].offset) + " is not the start of a heap block");
  }

  const unsigned threads = std::max(1u, std::min<unsigned>(options_.recovery_threads != 0
                                                                 ? options_.recovery_threads
                                                                 : std::thread::hardware_concurrency(),
                                                             static_cast<unsigned>(indexed.size() / 4096 + 1)));
  std::vector<std::string> problems(threads);
  std::vector<std::uint64_t> highest(threads, 0), bytes(threads, 0);
  const auto check_range = [&](unsigned part) {
    const std::size_t from = indexed.size() * part / threads, to = indexed.size() * (part + 1) / threads;
    for (std::size_t k = from; k < to && problems[part].empty(); ++k) {
      const auto& item = *static_cast<const item_header*>(items_->at(indexed[k].offset));
      const std::string where = "the item at heap offset " + std::to_string(indexed[k].offset);
      if (block_bytes[k] < sizeof(item_header)) problems[part] = where + " is smaller than an item header";
      else if (const char* problem = item_problem(item, block_bytes[k])) problems[part] = where + ": " + problem;
      else if (item.digest != indexed[k].digest || digest_of(item.key(), seeds) != indexed[k].digest) {
        problems[part] = where + " is indexed under another key";
      }
      highest[part] = std::max(highest[part], item.cas);
      bytes[part] += block_bytes[k];
    }
  };
  std::vector<std::thread> helpers;
  for (unsigned part = 1; part < threads; ++part) helpers.emplace_back(check_range, part);
  check_range(0);
  for (auto& helper : helpers) helper.join();
  for (const std::string& problem : problems) {
    if (!problem.empty()) damaged(problem);
  }
  const std::uint64_t highest_cas = *std::max_element(highest.begin(), highest.end());

  // Pass 2: confirm what the index holds, free every other item block.
  for (void* p : confirm) items_->confirm_allocation(p);
  for (void* p : leftovers) {
    items_->deallocate(p);
    items_->confirm_deallocation(p);
  }
  items_->finish_recovery();
  if (rehearsal_) {
    // The heap validates its free lists and map where an operation uses them; in a rehearsal
    // (on a copy) its whole check runs too, so damage there is refused at open, not met by a
    // later store or delete.
    if (const auto heap_problems = items_->check(); !heap_problems.empty()) {
      damaged("the item heap: " + heap_problems.front() +
              (heap_problems.size() > 1 ? " (and " + std::to_string(heap_problems.size() - 1) + " more problems)" : ""));
    }
  }

  for (const ring_entry& e : indexed) {
    stripe& s = stripe_of(e.digest);
    s.ring.push_back(e);
    ++s.live;
  }
  counters_.items = indexed.size();
  counters_.bytes = std::accumulate(bytes.begin(), bytes.end(), std::uint64_t{0});
  report_.items = indexed.size();
  reserved_ = std::max(root_->cas_high_water, highest_cas);
  flushes_.flush_now(root_->flush_cas_limit);
  if (root_->flush_at != 0) flushes_.flush_at(root_->flush_at);
}

soft_engine::stripe& soft_engine::stripe_of(const key_digest& digest) {
  return stripes_[digest[0] % stripe_count];
}

item_header* soft_engine::item_at(std::uint64_t offset) const {
  return static_cast<item_header*>(items_->at(offset));
}

item_header* soft_engine::find(const key_digest& digest, std::string_view key, std::uint64_t* offset) const {
  const std::optional<std::uint64_t> slot = index_->get(digest);
  *offset = slot.value_or(0);
  if (!slot) return nullptr;
  item_header* item = item_at(*slot);
  return item->key() == key ? item : nullptr;
}

bool soft_engine::live(const item_header& item, std::int64_t now) const {
  return !is_expired(item.expires_at, now) && !flushes_.flushed(item.cas, item.stored_at, now);
}

FERRITE_FLOW_ROOT std::uint64_t soft_engine::next_cas(stripe& s) {
  const std::uint64_t generation = cas_generation_.load(std::memory_order_acquire);
  if (s.next_cas == s.cas_end || s.cas_generation != generation) {
    std::lock_guard held(high_water_lock_);
    s.next_cas = reserved_;
    reserved_ += std::max<std::uint64_t>(1, options_.cas_step);
    s.cas_end = reserved_;
    s.cas_generation = generation;
    root_->cas_high_water = reserved_;
    // No fence here: an id of this range reaches an item, and so a reply, only after the
    // item's pfence in publish(), on this thread, which makes this write-back durable first.
    pmem::pwb(&root_->cas_high_water);
  }
  return ++s.next_cas;
}

void* soft_engine::allocate_with_eviction(stripe& s, std::size_t bytes) {
  for (int attempt = 0; attempt < 256; ++attempt) {
    try {
      return items_->allocate(bytes);
    } catch (const std::bad_alloc&) {
    }
    if (!options_.evict) return nullptr;
    bool evicted = evict_one(s);
    for (std::size_t i = 1; !evicted && i < stripe_count; ++i) {
      stripe& other = stripes_[(static_cast<std::size_t>(&s - stripes_.get()) + i) % stripe_count];
      if (!other.lock.try_lock()) continue;  // never wait for a second stripe: no lock order to break
      evicted = evict_one(other);
      other.lock.unlock();
    }
    if (!evicted) return nullptr;
  }
  return nullptr;
}

bool soft_engine::evict_one(stripe& s) {
  for (std::size_t turns = s.ring.size(); turns > 0 && !s.ring.empty(); --turns) {
    const ring_entry entry = s.ring.front();
    s.ring.pop_front();
    const std::optional<std::uint64_t> current = index_->get(entry.digest);
    if (!current || *current != entry.offset) continue;  // replaced or deleted since
    std::atomic<std::uint8_t>& bit = referenced_[entry.offset / 64];
    if (bit.load(std::memory_order_relaxed) != 0) {
      bit.store(0, std::memory_order_relaxed);
      s.ring.push_back(entry);
      continue;
    }
    drop(s, entry.digest, entry.offset);
    counters_.evictions.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  return false;
}

void soft_engine::release(std::uint64_t offset) {
  void* block = items_->at(offset);
  counters_.bytes.fetch_sub(items_->block_size(block), std::memory_order_relaxed);
  items_->deallocate(block);
  items_->confirm_deallocation(block);
}

void soft_engine::drop(stripe& s, const key_digest& digest, std::uint64_t offset) {
  index_->erase(digest);
  release(offset);
  --s.live;
  counters_.items.fetch_sub(1, std::memory_order_relaxed);
}

FERRITE_FLOW_ROOT store_outcome soft_engine::publish(stripe& s, const key_digest& digest, std::string_view key, std::string_view head,
                                   std::string_view tail, std::uint32_t flags, std::int64_t expires_at,
                                   std::int64_t now, std::uint64_t replaced) {
  const std::size_t value_bytes = head.size() + tail.size();
  const std::size_t bytes = item_header::bytes_for(key.size(), value_bytes);
  if (key.size() + value_bytes > options_.max_item_bytes || bytes > items_->max_allocation()) {
    return {store_result::too_large, 0};
  }
  void* block = allocate_with_eviction(s, bytes);
  if (block == nullptr) return {store_result::out_of_memory, 0};
  auto* item = new (block) item_header{};
  item->magic = item_header::magic_value;
  item->cas = next_cas(s);
  item->stored_at = now;
  item->expires_at = expires_at;
  item->flags = flags;
  item->key_length = static_cast<std::uint32_t>(key.size());
  item->value_length = static_cast<std::uint32_t>(value_bytes);
  item->digest = digest;
  char* bytes_after = reinterpret_cast<char*>(item + 1);
  // An empty string_view may have a null data(), which memcpy must not be given.
  for (const std::string_view part : {key, head, tail}) {
    if (!part.empty()) std::memcpy(bytes_after, part.data(), part.size());
    bytes_after += part.size();
  }
  item->checksum = item->compute_checksum();
  pmem::pwb_range(block, bytes);
  pmem::pfence();  // the item is durable before the index can name it
  const std::uint64_t offset = items_->offset_of(block);
  try {
    index_->insert_or_assign(digest, offset);
  } catch (const std::bad_alloc&) {  // the index's heap is full
    items_->confirm_allocation(block);
    items_->deallocate(block);
    items_->confirm_deallocation(block);
    return {store_result::out_of_memory, 0};
  }
  items_->confirm_allocation(block);
  counters_.bytes.fetch_add(items_->block_size(block), std::memory_order_relaxed);
  if (replaced != 0) {
    release(replaced);
  } else {
    ++s.live;
    counters_.items.fetch_add(1, std::memory_order_relaxed);
  }
  counters_.total_items.fetch_add(1, std::memory_order_relaxed);
  s.ring.push_back({digest, offset});
  if (s.ring.size() > 2 * s.live + 64) {  // drop the stale entries updates left behind
    std::erase_if(s.ring, [&](const ring_entry& e) {
      const auto current = index_->get(e.digest);
      return !current || *current != e.offset;
    });
  }
  return {store_result::stored, item->cas, replaced != 0};  // store() refines `replaced`
}

bool soft_engine::get(std::string_view key, std::int64_t now, std::optional<std::int64_t> new_expires,
                      const item_reader& read) {
  const key_digest digest = digest_of(key, {root_->seeds[0], root_->seeds[1]});
  stripe& s = stripe_of(digest);
  const auto visit = [&] {
    std::uint64_t offset = 0;
    item_header* item = find(digest, key, &offset);
    if (item == nullptr || !live(*item, now)) return false;
    if (new_expires) {
      std::atomic_ref<std::int64_t>(item->expires_at).store(*new_expires, std::memory_order_relaxed);
      pmem::pwb(&item->expires_at);
      pmem::pfence();
    }
    std::atomic<std::uint8_t>& bit = referenced_[offset / 64];
    if (bit.load(std::memory_order_relaxed) == 0) bit.store(1, std::memory_order_relaxed);
    read(item_view{item->key(), item->value(), item->flags, item->expires_at, item->cas});
    return true;
  };
  if (new_expires) {
    std::unique_lock held(s.lock);
    return visit();
  }
  std::shared_lock held(s.lock);
  return visit();
}

store_outcome soft_engine::store(const store_request& request, std::int64_t now) {
  const key_digest digest = digest_of(request.key, {root_->seeds[0], root_->seeds[1]});
  stripe& s = stripe_of(digest);
  std::unique_lock held(s.lock);
  std::uint64_t slot = 0;
  item_header* old = find(digest, request.key, &slot);
  if (old != nullptr && !live(*old, now)) {
    drop(s, digest, slot);
    counters_.reclaimed.fetch_add(1, std::memory_order_relaxed);
    old = nullptr;
    slot = 0;
  }
  if (const auto refused = store_refusal(request, old != nullptr, old != nullptr ? old->cas : 0)) {
    return {*refused, 0};
  }
  // `slot` may hold another key with the same digest: the new item displaces it.
  store_outcome outcome;
  if (request.mode == store_mode::append) {
    outcome = publish(s, digest, request.key, old->value(), request.value, old->flags, old->expires_at, now, slot);
  } else if (request.mode == store_mode::prepend) {
    outcome = publish(s, digest, request.key, request.value, old->value(), old->flags, old->expires_at, now, slot);
  } else {
    outcome = publish(s, digest, request.key, request.value, {}, request.flags, request.expires_at, now, slot);
  }
  outcome.replaced = old != nullptr;  // this key's item, not a displaced one with the same digest
  return outcome;
}

remove_result soft_engine::remove(std::string_view key, std::uint64_t compare_cas, std::int64_t now) {
  const key_digest digest = digest_of(key, {root_->seeds[0], root_->seeds[1]});
  stripe& s = stripe_of(digest);
  std::unique_lock held(s.lock);
  std::uint64_t slot = 0;
  item_header* item = find(digest, key, &slot);
  if (item == nullptr) return remove_result::not_found;
  if (!live(*item, now)) {
    drop(s, digest, slot);
    counters_.reclaimed.fetch_add(1, std::memory_order_relaxed);
    return remove_result::not_found;
  }
  if (compare_cas != 0 && item->cas != compare_cas) return remove_result::exists;
  drop(s, digest, slot);
  return remove_result::deleted;
}

FERRITE_FLOW_ROOT touch_result soft_engine::touch(std::string_view key, std::int64_t expires_at, std::int64_t now) {
  const key_digest digest = digest_of(key, {root_->seeds[0], root_->seeds[1]});
  stripe& s = stripe_of(digest);
  std::unique_lock held(s.lock);
  std::uint64_t slot = 0;
  item_header* item = find(digest, key, &slot);
  if (item == nullptr || !live(*item, now)) return touch_result::not_found;
  std::atomic_ref<std::int64_t>(item->expires_at).store(expires_at, std::memory_order_relaxed);
  pmem::pwb(&item->expires_at);
  pmem::pfence();
  return touch_result::touched;
}

arith_outcome soft_engine::arith(const arith_request& request, std::int64_t now) {
  const key_digest digest = digest_of(request.key, {root_->seeds[0], root_->seeds[1]});
  stripe& s = stripe_of(digest);
  std::unique_lock held(s.lock);
  std::uint64_t slot = 0;
  item_header* item = find(digest, request.key, &slot);
  if (item != nullptr && !live(*item, now)) {
    drop(s, digest, slot);
    item = nullptr;
    slot = 0;
  }
  if (item == nullptr) {
    if (!request.vivify_expires) return {arith_result::not_found};
    const std::string text = std::to_string(request.initial);
    const store_outcome made = publish(s, digest, request.key, text, {}, 0, *request.vivify_expires, now, slot);
    if (made.result != store_result::stored) return {arith_result::not_found};
    return {arith_result::ok, request.initial, made.cas, *request.vivify_expires};
  }
  if (request.compare_cas != 0 && item->cas != request.compare_cas) return {arith_result::exists};
  const std::optional<std::uint64_t> value = parse_counter(item->value());
  if (!value) return {arith_result::non_numeric};
  const std::uint64_t next = apply_delta(*value, request.increment, request.delta);
  const std::int64_t expires_at = request.new_expires.value_or(item->expires_at);
  const store_outcome made = publish(s, digest, request.key, std::to_string(next), {}, item->flags, expires_at, now, slot);
  if (made.result != store_result::stored) return {arith_result::not_found};
  return {arith_result::ok, next, made.cas, expires_at};
}

void soft_engine::flush(std::int64_t at, std::int64_t now) {
  std::lock_guard held(high_water_lock_);
  if (at <= now) {
    // Every id handed out so far is at most reserved_; the stripes take new ranges above it.
    const std::uint64_t limit = reserved_;
    cas_generation_.fetch_add(1, std::memory_order_acq_rel);
    root_->flush_cas_limit = std::max(root_->flush_cas_limit, limit);
    pmem::pwb(&root_->flush_cas_limit);
    pmem::pfence();
    flushes_.flush_now(limit);
  } else {
    root_->flush_at = at;
    pmem::pwb(&root_->flush_at);
    pmem::pfence();
    flushes_.flush_at(at);
  }
}

std::vector<std::string> soft_engine::check_items() const {
  std::vector<std::string> problems = items_->check();
  std::uint64_t allocated = 0;
  for (const alloc::block_info& block : items_->blocks()) {
    if (block.state == alloc::block_state::free) continue;
    ++allocated;
    if (block.state != alloc::block_state::live) {
      problems.push_back("item block at " + std::to_string(block.offset) + " is " + alloc::to_string(block.state));
    }
  }
  const std::uint64_t indexed = counters_.items.load(std::memory_order_relaxed);
  if (allocated != indexed) {
    problems.push_back(std::to_string(allocated) + " item blocks allocated, " + std::to_string(indexed) + " indexed");
  }
  return problems;
}

engine_stats soft_engine::stats() const { return counters_.snapshot(root_->heap_size); }

}  // namespace ferrite::kv
