#include "volatile_engine.hpp"

#include "counter.hpp"
#include "store_rules.hpp"

#include <ctime>

namespace ferrite::kv {

std::int64_t unix_now() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return now.tv_sec;
}

struct volatile_engine::item {
  std::string key;
  std::string value;
  std::uint32_t flags = 0;
  std::int64_t expires_at = 0;
  std::int64_t stored_at = 0;
  std::uint64_t cas = 0;
  bool referenced = false;
  bool fetched = false;
  item* newer = nullptr;  // CLOCK ring as a list: newest at head, oldest at tail
  item* older = nullptr;

  [[nodiscard]] std::size_t charge() const { return key.size() + value.size() + item_overhead; }
};

struct volatile_engine::shard {
  std::mutex lock;
  item_map items;
  item* newest = nullptr;
  item* oldest = nullptr;

  void push_newest(item* it) {
    it->older = newest;
    it->newer = nullptr;
    if (newest != nullptr) newest->newer = it;
    newest = it;
    if (oldest == nullptr) oldest = it;
  }
};

volatile_engine::volatile_engine(engine_limits limits) : limits_(limits) {
  for (auto& s : shards_) s = std::make_unique<shard>();
}

volatile_engine::~volatile_engine() = default;

volatile_engine::shard& volatile_engine::shard_of(std::string_view key) {
  return *shards_[key_hash{}(key) % shard_count];
}

void volatile_engine::unlink(shard& s, item* it) {
  if (it->newer != nullptr) it->newer->older = it->older; else s.newest = it->older;
  if (it->older != nullptr) it->older->newer = it->newer; else s.oldest = it->newer;
  it->newer = it->older = nullptr;
}

void volatile_engine::erase(shard& s, item* it) {
  unlink(s, it);
  counters_.bytes.fetch_sub(it->charge(), std::memory_order_relaxed);
  counters_.items.fetch_sub(1, std::memory_order_relaxed);
  s.items.erase(s.items.find(std::string_view(it->key)));  // destroys *it
}

volatile_engine::item* volatile_engine::find_live(shard& s, std::string_view key, std::int64_t now) {
  const auto found = s.items.find(key);
  if (found == s.items.end()) return nullptr;
  item* it = found->second.get();
  if (is_expired(it->expires_at, now) || flushes_.flushed(it->cas, it->stored_at, now)) {
    if (!it->fetched) counters_.expired_unfetched.fetch_add(1, std::memory_order_relaxed);
    counters_.reclaimed.fetch_add(1, std::memory_order_relaxed);
    erase(s, it);
    return nullptr;
  }
  return it;
}

bool volatile_engine::evict_one(shard& s) {
  // Second chance: pass over (and clear) referenced items, at most one full turn.
  for (std::size_t turns = s.items.size() + 1; s.oldest != nullptr && turns > 0; --turns) {
    item* victim = s.oldest;
    if (!victim->referenced) {
      erase(s, victim);
      counters_.evictions.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
    victim->referenced = false;
    unlink(s, victim);
    s.push_newest(victim);
  }
  return false;
}

bool volatile_engine::make_room(shard& s, std::size_t bytes) {
  const auto fits = [&] { return counters_.bytes.load(std::memory_order_relaxed) + bytes <= limits_.memory_bytes; };
  if (fits()) return true;
  if (!limits_.evict) return false;
  while (!fits() && evict_one(s)) {
  }
  for (auto& other : shards_) {
    if (fits()) break;
    if (other.get() == &s || !other->lock.try_lock()) continue;
    std::lock_guard held(other->lock, std::adopt_lock);
    while (!fits() && evict_one(*other)) {
    }
  }
  return fits();
}

store_outcome volatile_engine::put(shard& s, item* old, std::string_view key, std::string value,
                                   std::uint32_t flags, std::int64_t expires_at, std::int64_t now) {
  const std::size_t size = key.size() + value.size();
  if (size > limits_.max_item_bytes) return {store_result::too_large, 0};
  // The old item leaves the ring (so eviction cannot take it) but keeps its memory until the
  // new one has room: a refused store leaves the old value in place.
  const std::size_t charge = size + item_overhead;
  const std::size_t credit = old != nullptr ? old->charge() : 0;
  if (old != nullptr) unlink(s, old);
  if (charge > credit && !make_room(s, charge - credit)) {
    if (old != nullptr) s.push_newest(old);
    return {store_result::out_of_memory, 0};
  }
  if (old != nullptr) {
    s.push_newest(old);
    erase(s, old);
  }
  auto fresh = std::make_unique<item>();
  fresh->key.assign(key);
  fresh->value = std::move(value);
  fresh->flags = flags;
  fresh->expires_at = expires_at;
  fresh->stored_at = now;
  fresh->cas = next_cas_.fetch_add(1, std::memory_order_relaxed) + 1;
  item* it = fresh.get();
  s.items.emplace(fresh->key, std::move(fresh));
  s.push_newest(it);
  counters_.bytes.fetch_add(charge, std::memory_order_relaxed);
  counters_.items.fetch_add(1, std::memory_order_relaxed);
  counters_.total_items.fetch_add(1, std::memory_order_relaxed);
  return {store_result::stored, it->cas, old != nullptr};
}

bool volatile_engine::get(std::string_view key, std::int64_t now, std::optional<std::int64_t> new_expires,
                          const item_reader& read) {
  shard& s = shard_of(key);
  std::lock_guard held(s.lock);
  item* it = find_live(s, key, now);
  if (it == nullptr) return false;
  if (new_expires) it->expires_at = *new_expires;
  it->referenced = true;
  it->fetched = true;
  read(item_view{it->key, it->value, it->flags, it->expires_at, it->cas});
  return true;
}

store_outcome volatile_engine::store(const store_request& request, std::int64_t now) {
  shard& s = shard_of(request.key);
  std::lock_guard held(s.lock);
  item* old = find_live(s, request.key, now);
  if (const auto refused = store_refusal(request, old != nullptr, old != nullptr ? old->cas : 0)) {
    if (*refused == store_result::not_stored && old != nullptr) old->referenced = true;  // add hit a live key
    return {*refused, 0};
  }
  if (request.mode == store_mode::append || request.mode == store_mode::prepend) {
    if (old->key.size() + old->value.size() + request.value.size() > limits_.max_item_bytes) {
      return {store_result::too_large, 0};
    }
    std::string joined;
    joined.reserve(old->value.size() + request.value.size());
    if (request.mode == store_mode::append) {
      joined.append(old->value).append(request.value);
    } else {
      joined.append(request.value).append(old->value);
    }
    return put(s, old, request.key, std::move(joined), old->flags, old->expires_at, now);
  }
  return put(s, old, request.key, std::string(request.value), request.flags, request.expires_at, now);
}

remove_result volatile_engine::remove(std::string_view key, std::uint64_t compare_cas, std::int64_t now) {
  shard& s = shard_of(key);
  std::lock_guard held(s.lock);
  item* it = find_live(s, key, now);
  if (it == nullptr) return remove_result::not_found;
  if (compare_cas != 0 && it->cas != compare_cas) return remove_result::exists;
  erase(s, it);
  return remove_result::deleted;
}

touch_result volatile_engine::touch(std::string_view key, std::int64_t expires_at, std::int64_t now) {
  shard& s = shard_of(key);
  std::lock_guard held(s.lock);
  item* it = find_live(s, key, now);
  if (it == nullptr) return touch_result::not_found;
  it->expires_at = expires_at;
  it->referenced = true;
  return touch_result::touched;
}

arith_outcome volatile_engine::arith(const arith_request& request, std::int64_t now) {
  shard& s = shard_of(request.key);
  std::lock_guard held(s.lock);
  item* it = find_live(s, request.key, now);
  if (it == nullptr) {
    if (!request.vivify_expires) return {arith_result::not_found};
    const std::string text = std::to_string(request.initial);
    const store_outcome made = put(s, nullptr, request.key, text, 0, *request.vivify_expires, now);
    if (made.result != store_result::stored) return {arith_result::not_found};
    return {arith_result::ok, request.initial, made.cas, *request.vivify_expires};
  }
  if (request.compare_cas != 0 && it->cas != request.compare_cas) return {arith_result::exists};
  const std::optional<std::uint64_t> value = parse_counter(it->value);
  if (!value) return {arith_result::non_numeric};
  const std::uint64_t next = apply_delta(*value, request.increment, request.delta);
  const std::int64_t expires_at = request.new_expires.value_or(it->expires_at);
  const store_outcome made = put(s, it, request.key, std::to_string(next), it->flags, expires_at, now);
  if (made.result != store_result::stored) return {arith_result::not_found};
  return {arith_result::ok, next, made.cas, expires_at};
}

void volatile_engine::flush(std::int64_t at, std::int64_t now) {
  if (at <= now) {
    flushes_.flush_now(next_cas_.load(std::memory_order_relaxed));
  } else {
    flushes_.flush_at(at);
  }
}

engine_stats volatile_engine::stats() const { return counters_.snapshot(limits_.memory_bytes); }

}  // namespace ferrite::kv
