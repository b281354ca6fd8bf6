// The classic memcached text commands: storage, retrieval, delete, incr/decr, touch, flush_all
// and stats, worded as memcached 1.6 words its replies (doc/protocol.txt of memcached).
#include "expiry.hpp"
#include "session.hpp"
#include "wire.hpp"

#include <unistd.h>

#include <limits>

namespace ferrite::kv {

namespace {

std::string_view storage_reply(store_result result) {
  switch (result) {
    case store_result::stored: return "STORED\r\n";
    case store_result::not_stored: return "NOT_STORED\r\n";
    case store_result::exists: return "EXISTS\r\n";
    case store_result::not_found: return "NOT_FOUND\r\n";
    case store_result::too_large: return wire::too_large;
    case store_result::out_of_memory: return wire::out_of_memory;
  }
  return wire::error;
}

bool is_error(store_result result) {
  return result == store_result::too_large || result == store_result::out_of_memory;
}

// The largest value a request may announce: memcached reads lengths as 32-bit integers.
constexpr std::int64_t max_announced_bytes = std::numeric_limits<std::int32_t>::max() - 2;

}  // namespace

session::step session::storage(store_mode mode, std::string_view rest, std::size_t& data_used,
                               std::string& out) {
  const bool with_cas = mode == store_mode::cas;
  const std::size_t plain = with_cas ? 6 : 5;
  const bool quiet = quiet_suffix(plain);
  if (tokens_.size() != plain && !quiet) {
    out += wire::error;
    return step::done;
  }
  const std::string_view key = tokens_[1];
  const auto flags = wire::number<std::uint32_t>(tokens_[2]);
  const auto exptime = wire::number<std::int64_t>(tokens_[3]);
  const auto bytes = wire::number<std::int64_t>(tokens_[4]);
  const auto compare = with_cas ? wire::number<std::uint64_t>(tokens_[5]) : std::optional<std::uint64_t>(0);
  if (!wire::valid_key(key) || !flags || !exptime || !bytes || *bytes < 0 || *bytes > max_announced_bytes ||
      !compare) {
    out += wire::bad_format;
    return step::done;
  }
  const auto length = static_cast<std::size_t>(*bytes);
  if (key.size() + length > context_.settings.max_item_bytes) {
    out += wire::too_large;
    skip_ = length + 2;  // skipped as it arrives, never buffered
    return step::done;
  }
  std::string_view data;
  switch (take_data(rest, length, data_used, data)) {
    case data_state::need_more: return step::need_more;
    case data_state::bad_chunk: out += wire::bad_chunk; return step::done;
    case data_state::ready: break;
  }
  server_counters::bump(context_.counters.cmd_set);
  const store_outcome outcome = context_.store.store(
      store_request{mode, key, data, *flags, expires_from_wire(*exptime, now_), *compare}, now_);
  if (with_cas) {
    auto& counters = context_.counters;
    server_counters::bump(outcome.result == store_result::stored   ? counters.cas_hits
                          : outcome.result == store_result::exists ? counters.cas_badval
                                                                   : counters.cas_misses);
  }
  if (!quiet || is_error(outcome.result)) out += storage_reply(outcome.result);
  return step::done;
}

void session::retrieval(bool with_cas, bool touching, std::string& out) {
  const std::size_t first_key = touching ? 2 : 1;
  if (tokens_.size() <= first_key) {
    out += wire::error;
    return;
  }
  std::optional<std::int64_t> new_expires;
  if (touching) {
    const auto exptime = wire::number<std::int64_t>(tokens_[1]);
    if (!exptime) {
      out += wire::bad_exptime;
      return;
    }
    new_expires = expires_from_wire(*exptime, now_);
  }
  auto& counters = context_.counters;
  for (std::size_t i = first_key; i < tokens_.size(); ++i) {
    const std::string_view key = tokens_[i];
    if (!wire::valid_key(key)) {
      out += wire::bad_format;
      return;
    }
    const bool hit = context_.store.get(key, now_, new_expires, [&](const item_view& item) {
      out.append("VALUE ").append(item.key).push_back(' ');
      wire::append_number(out, item.flags);
      out.push_back(' ');
      wire::append_number(out, item.value.size());
      if (with_cas) {
        out.push_back(' ');
        wire::append_number(out, item.cas);
      }
      out.append("\r\n").append(item.value).append("\r\n");
    });
    server_counters::bump(counters.cmd_get);
    server_counters::bump(hit ? counters.get_hits : counters.get_misses);
    if (touching) {
      server_counters::bump(counters.cmd_touch);
      server_counters::bump(hit ? counters.touch_hits : counters.touch_misses);
    }
  }
  out += "END\r\n";
}

void session::remove(std::string& out) {
  const std::size_t count = tokens_.size();
  if (count < 2) {
    out += wire::error;
    return;
  }
  bool quiet = false;
  if (count > 2) {
    const bool hold_is_zero = tokens_[2] == "0";
    quiet = tokens_.back() == "noreply";
    const bool valid = (count == 3 && (hold_is_zero || quiet)) || (count == 4 && hold_is_zero && quiet);
    if (!valid) {
      out += "CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]\r\n";
      return;
    }
  }
  if (!wire::valid_key(tokens_[1])) {
    out += wire::bad_format;
    return;
  }
  const remove_result result = context_.store.remove(tokens_[1], 0, now_);
  const bool deleted = result == remove_result::deleted;
  server_counters::bump(deleted ? context_.counters.delete_hits : context_.counters.delete_misses);
  if (!quiet) out += deleted ? "DELETED\r\n" : "NOT_FOUND\r\n";
}

void session::arith(bool increment, std::string& out) {
  const bool quiet = quiet_suffix(3);
  if (tokens_.size() != 3 && !quiet) {
    out += wire::error;
    return;
  }
  if (!wire::valid_key(tokens_[1])) {
    out += wire::bad_format;
    return;
  }
  const auto delta = wire::number<std::uint64_t>(tokens_[2]);
  if (!delta) {
    out += wire::bad_delta;
    return;
  }
  arith_request request;
  request.key = tokens_[1];
  request.increment = increment;
  request.delta = *delta;
  const arith_outcome outcome = context_.store.arith(request, now_);
  auto& counters = context_.counters;
  const bool hit = outcome.result == arith_result::ok;
  if (increment) server_counters::bump(hit ? counters.incr_hits : counters.incr_misses);
  else server_counters::bump(hit ? counters.decr_hits : counters.decr_misses);
  if (outcome.result == arith_result::non_numeric) {
    out += wire::non_numeric;
    return;
  }
  if (quiet) return;
  if (hit) {
    wire::append_number(out, outcome.value);
    out += "\r\n";
  } else {
    out += "NOT_FOUND\r\n";
  }
}

void session::touch(std::string& out) {
  const bool quiet = quiet_suffix(3);
  if (tokens_.size() != 3 && !quiet) {
    out += wire::error;
    return;
  }
  if (!wire::valid_key(tokens_[1])) {
    out += wire::bad_format;
    return;
  }
  const auto exptime = wire::number<std::int64_t>(tokens_[2]);
  if (!exptime) {
    out += wire::bad_exptime;
    return;
  }
  const touch_result result = context_.store.touch(tokens_[1], expires_from_wire(*exptime, now_), now_);
  const bool hit = result == touch_result::touched;
  server_counters::bump(context_.counters.cmd_touch);
  server_counters::bump(hit ? context_.counters.touch_hits : context_.counters.touch_misses);
  if (!quiet) out += hit ? "TOUCHED\r\n" : "NOT_FOUND\r\n";
}

void session::flush_all(std::string& out) {
  const bool quiet = tokens_.size() >= 2 && tokens_.back() == "noreply";
  const std::size_t arguments = tokens_.size() - 1 - (quiet ? 1 : 0);
  if (arguments > 1) {
    out += wire::error;
    return;
  }
  std::int64_t delay = 0;
  if (arguments == 1) {
    const auto parsed = wire::number<std::int64_t>(tokens_[1]);
    if (!parsed || *parsed < 0) {
      out += wire::bad_format;
      return;
    }
    delay = *parsed;
  }
  server_counters::bump(context_.counters.cmd_flush);
  context_.store.flush(delay > 0 ? expires_from_wire(delay, now_) : now_, now_);
  if (!quiet) out += "OK\r\n";
}

}  // namespace ferrite::kv
