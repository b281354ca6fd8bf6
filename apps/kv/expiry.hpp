// memcached's rules for time: how an expiry on the wire becomes an absolute time, when an item
// is dead, and what flush_all invalidates. Shared by every engine so that they all agree.
//
// Wire expiry (memcached protocol.txt): 0 never expires; a negative value has already expired;
// up to 30 days it is relative to now; above that it is an absolute unix time.
// flush_all without a delay invalidates every item whose CAS id is at most the last one issued
// (so an item stored in the same second after the flush survives, as in memcached 1.6);
// with a delay, every item stored at or before that time, once the time has come.
#pragma once

#include <atomic>
#include <cstdint>

namespace ferrite::kv {

inline constexpr std::int64_t relative_expiry_limit = 60 * 60 * 24 * 30;

// Seconds since the epoch (CLOCK_REALTIME): absolute expiries are unix times.
std::int64_t unix_now();

[[nodiscard]] constexpr std::int64_t expires_from_wire(std::int64_t exptime, std::int64_t now) {
  if (exptime == 0) return 0;
  if (exptime < 0) return now > 1 ? now - 1 : 1;  // already expired, and not "never"
  if (exptime <= relative_expiry_limit) return now + exptime;
  return exptime;
}

[[nodiscard]] constexpr bool is_expired(std::int64_t expires_at, std::int64_t now) {
  return expires_at != 0 && expires_at <= now;
}

// Seconds left for meta's t flag: -1 when the item never expires.
[[nodiscard]] constexpr std::int64_t ttl_left(std::int64_t expires_at, std::int64_t now) {
  if (expires_at == 0) return -1;
  return expires_at > now ? expires_at - now : 0;
}

class flush_rule {
 public:
  // flush_all with no delay: everything issued up to `last_cas` is gone.
  void flush_now(std::uint64_t last_cas) {
    std::uint64_t seen = cas_limit_.load(std::memory_order_relaxed);
    while (seen < last_cas && !cas_limit_.compare_exchange_weak(seen, last_cas)) {
    }
  }
  // flush_all <delay>: what was stored at or before `at` dies when `at` comes.
  void flush_at(std::int64_t at) { at_.store(at, std::memory_order_relaxed); }

  [[nodiscard]] bool flushed(std::uint64_t cas, std::int64_t stored_at, std::int64_t now) const {
    if (cas <= cas_limit_.load(std::memory_order_relaxed)) return true;
    const std::int64_t at = at_.load(std::memory_order_relaxed);
    return at != 0 && now >= at && stored_at <= at;
  }

 private:
  std::atomic<std::uint64_t> cas_limit_{0};
  std::atomic<std::int64_t> at_{0};
};

}  // namespace ferrite::kv
