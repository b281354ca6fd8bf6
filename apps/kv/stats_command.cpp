// `stats`, `stats settings`, `stats items`, `stats reset`: memcached's names for the figures a
// monitoring tool already knows how to read.
#include "session.hpp"
#include "wire.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

namespace ferrite::kv {

namespace {

void stat(std::string& out, std::string_view name, std::uint64_t value) {
  out.append("STAT ").append(name).push_back(' ');
  wire::append_number(out, value);
  out += "\r\n";
}

void stat(std::string& out, std::string_view name, std::string_view value) {
  out.append("STAT ").append(name).push_back(' ');
  out.append(value).append("\r\n");
}

std::string seconds(const timeval& time) {
  char text[48];
  std::snprintf(text, sizeof text, "%ld.%06ld", static_cast<long>(time.tv_sec), static_cast<long>(time.tv_usec));
  return text;
}

std::uint64_t read(const std::atomic<std::uint64_t>& counter) { return counter.load(std::memory_order_relaxed); }

}  // namespace

void session::stats(std::string& out) {
  const server_settings& settings = context_.settings;
  const engine_stats held = context_.store.stats();
  const std::string_view group = tokens_.size() > 1 ? tokens_[1] : std::string_view{};
  if (tokens_.size() > 2) {
    out += wire::error;
    return;
  }
  if (group == "settings") {
    stat(out, "maxbytes", settings.memory_bytes);
    stat(out, "maxconns", static_cast<std::uint64_t>(settings.max_connections));
    stat(out, "tcpport", static_cast<std::uint64_t>(settings.port));
    stat(out, "udpport", std::uint64_t{0});
    stat(out, "interface", settings.listen);
    stat(out, "evictions", settings.evict ? "on" : "off");
    stat(out, "num_threads", static_cast<std::uint64_t>(settings.threads));
    stat(out, "item_size_max", settings.max_item_bytes);
    stat(out, "cas_enabled", "yes");
    stat(out, "engine", settings.engine);
    stat(out, "pool", settings.pool.empty() ? "-" : settings.pool);
  } else if (group == "items") {
    // One item class: ferrite-kv has no slab classes.
    stat(out, "items:1:number", held.items);
    stat(out, "items:1:evicted", held.evictions);
    stat(out, "items:1:expired_unfetched", held.expired_unfetched);
    stat(out, "items:1:reclaimed", held.reclaimed);
  } else if (group == "reset") {
    out += "RESET\r\n";
    return;
  } else if (!group.empty()) {
    out += wire::error;
    return;
  } else {
    const server_counters& c = context_.counters;
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const std::int64_t now = now_;
    stat(out, "pid", static_cast<std::uint64_t>(getpid()));
    stat(out, "uptime", static_cast<std::uint64_t>(now - context_.started_at));
    stat(out, "time", static_cast<std::uint64_t>(now));
    stat(out, "version", server_version);
    stat(out, "pointer_size", std::uint64_t{64});
    stat(out, "rusage_user", seconds(usage.ru_utime));
    stat(out, "rusage_system", seconds(usage.ru_stime));
    stat(out, "max_connections", static_cast<std::uint64_t>(settings.max_connections));
    stat(out, "curr_connections", read(c.curr_connections));
    stat(out, "total_connections", read(c.total_connections));
    stat(out, "rejected_connections", read(c.rejected_connections));
    stat(out, "cmd_get", read(c.cmd_get));
    stat(out, "cmd_set", read(c.cmd_set));
    stat(out, "cmd_flush", read(c.cmd_flush));
    stat(out, "cmd_touch", read(c.cmd_touch));
    stat(out, "cmd_meta", read(c.cmd_meta));
    stat(out, "get_hits", read(c.get_hits));
    stat(out, "get_misses", read(c.get_misses));
    stat(out, "get_expired", held.reclaimed);
    stat(out, "delete_misses", read(c.delete_misses));
    stat(out, "delete_hits", read(c.delete_hits));
    stat(out, "incr_misses", read(c.incr_misses));
    stat(out, "incr_hits", read(c.incr_hits));
    stat(out, "decr_misses", read(c.decr_misses));
    stat(out, "decr_hits", read(c.decr_hits));
    stat(out, "cas_misses", read(c.cas_misses));
    stat(out, "cas_hits", read(c.cas_hits));
    stat(out, "cas_badval", read(c.cas_badval));
    stat(out, "touch_hits", read(c.touch_hits));
    stat(out, "touch_misses", read(c.touch_misses));
    stat(out, "bytes_read", read(c.bytes_read));
    stat(out, "bytes_written", read(c.bytes_written));
    stat(out, "limit_maxbytes", settings.memory_bytes);
    stat(out, "threads", static_cast<std::uint64_t>(settings.threads));
    stat(out, "bytes", held.bytes);
    stat(out, "curr_items", held.items);
    stat(out, "total_items", held.total_items);
    stat(out, "expired_unfetched", held.expired_unfetched);
    stat(out, "evictions", held.evictions);
    stat(out, "reclaimed", held.reclaimed);
    if (held.durable_epoch) {
      stat(out, "durable_epoch", *held.durable_epoch);
      stat(out, "checkpoints", held.checkpoints);
    }
    stat(out, "engine", context_.store.name());
  }
  out += "END\r\n";
}

}  // namespace ferrite::kv
