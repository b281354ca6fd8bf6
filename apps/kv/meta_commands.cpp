// The meta commands of memcached 1.6 (mg, ms, md, ma; mn is one line in session.cpp): a key,
// then flags of one letter each, some with a token after the letter. Supported flags:
//   mg: v k f c s t O q T        ms: T F C M q O k c        md: C q O k
//   ma: N J D T M q O k t c v
// Any other flag is "CLIENT_ERROR invalid flag" (base64 keys, invalidation, stale items and
// win/recache are not implemented). Return flags are echoed in the order they were asked.
// q hides the reply that says nothing new: HD, and EN for mg, NF for md.
#include "expiry.hpp"
#include "session.hpp"
#include "wire.hpp"

#include <limits>

namespace ferrite::kv {

namespace {

// What a meta reply may echo about an item.
struct echo {
  std::string_view key;
  std::uint32_t flags = 0;
  std::uint64_t cas = 0;
  std::size_t size = 0;
  std::int64_t ttl = -1;
};

struct meta_request {
  bool value = false, quiet = false;
  std::optional<std::int64_t> ttl, vivify;
  std::optional<std::uint64_t> compare, initial, delta;
  std::optional<std::uint32_t> client_flags;
  char mode = 0;
};

// Parses the flags in tokens[first..] allowed by `allowed`; false on a bad or unknown flag,
// with the error appended.
bool parse_flags(const std::vector<std::string_view>& tokens, std::size_t first, std::string_view allowed,
                 meta_request& request, std::string& out) {
  for (std::size_t i = first; i < tokens.size(); ++i) {
    const char flag = tokens[i][0];
    const std::string_view argument = tokens[i].substr(1);
    if (allowed.find(flag) == std::string_view::npos) {
      out += wire::invalid_flag;
      return false;
    }
    bool ok = true;
    switch (flag) {
      case 'v': request.value = true; break;
      case 'q': request.quiet = true; break;
      case 'T': ok = (request.ttl = wire::number<std::int64_t>(argument)).has_value(); break;
      case 'N': ok = (request.vivify = wire::number<std::int64_t>(argument)).has_value(); break;
      case 'C': ok = (request.compare = wire::number<std::uint64_t>(argument)).has_value(); break;
      case 'J': ok = (request.initial = wire::number<std::uint64_t>(argument)).has_value(); break;
      case 'D': ok = (request.delta = wire::number<std::uint64_t>(argument)).has_value(); break;
      case 'F': ok = (request.client_flags = wire::number<std::uint32_t>(argument)).has_value(); break;
      case 'M': ok = argument.size() == 1; if (ok) request.mode = argument[0]; break;
      case 'O': ok = argument.size() <= 32; break;
      default: ok = argument.empty(); break;  // k f c s t: no argument
    }
    if (!ok) {
      out += wire::bad_format;
      return false;
    }
  }
  return true;
}

void echo_flags(const std::vector<std::string_view>& tokens, std::size_t first, const echo& item,
                std::string& out) {
  for (std::size_t i = first; i < tokens.size(); ++i) {
    const char flag = tokens[i][0];
    switch (flag) {
      case 'k': out.append(" k").append(item.key); break;
      case 'O': out.append(" ").append(tokens[i]); break;
      case 'f': out.append(" f"); wire::append_number(out, item.flags); break;
      case 'c': out.append(" c"); wire::append_number(out, item.cas); break;
      case 's': out.append(" s"); wire::append_number(out, item.size); break;
      case 't': out.append(" t"); wire::append_signed(out, item.ttl); break;
      default: break;
    }
  }
}

// "<code><flags>\r\n", unless it is the quiet-suppressed code.
void reply(std::string_view code, const std::vector<std::string_view>& tokens, std::size_t first,
           const echo& item, std::string& out) {
  out += code;
  echo_flags(tokens, first, item, out);
  out += "\r\n";
}

}  // namespace

void session::meta_get(std::string& out) {
  server_counters::bump(context_.counters.cmd_meta);
  if (tokens_.size() < 2 || !wire::valid_key(tokens_[1])) {
    out += wire::bad_format;
    return;
  }
  meta_request request;
  if (!parse_flags(tokens_, 2, "vkfcstOqT", request, out)) return;
  std::optional<std::int64_t> new_expires;
  if (request.ttl) new_expires = expires_from_wire(*request.ttl, now_);
  const bool hit = context_.store.get(tokens_[1], now_, new_expires, [&](const item_view& item) {
    const echo about{item.key, item.flags, item.cas, item.value.size(), ttl_left(item.expires_at, now_)};
    if (request.value) {
      out += "VA ";
      wire::append_number(out, item.value.size());
      echo_flags(tokens_, 2, about, out);
      out.append("\r\n").append(item.value).append("\r\n");
    } else {
      reply("HD", tokens_, 2, about, out);
    }
  });
  auto& counters = context_.counters;
  server_counters::bump(counters.cmd_get);
  server_counters::bump(hit ? counters.get_hits : counters.get_misses);
  if (!hit && !request.quiet) out += "EN\r\n";
}

session::step session::meta_set(std::string_view rest, std::size_t& data_used, std::string& out) {
  const auto length = tokens_.size() >= 3 ? wire::number<std::uint32_t>(tokens_[2]) : std::nullopt;
  if (!length || *length > std::numeric_limits<std::int32_t>::max() - 2 || !wire::valid_key(tokens_[1])) {
    out += wire::bad_format;  // without a length the data cannot be skipped: memcached does the same
    return step::done;
  }
  meta_request request;
  if (!parse_flags(tokens_, 3, "TFCMqOkc", request, out)) return step::done;
  if (tokens_[1].size() + *length > context_.settings.max_item_bytes) {
    out += wire::too_large;
    skip_ = std::size_t{*length} + 2;
    return step::done;
  }
  store_mode mode = store_mode::set;
  switch (request.mode) {
    case 0: case 'S': case 's': mode = store_mode::set; break;
    case 'E': case 'e': mode = store_mode::add; break;
    case 'A': case 'a': mode = store_mode::append; break;
    case 'P': case 'p': mode = store_mode::prepend; break;
    case 'R': case 'r': mode = store_mode::replace; break;
    default: out += wire::invalid_flag; skip_ = std::size_t{*length} + 2; return step::done;
  }
  std::string_view data;
  switch (take_data(rest, *length, data_used, data)) {
    case data_state::need_more: return step::need_more;
    case data_state::bad_chunk: out += wire::bad_chunk; return step::done;
    case data_state::ready: break;
  }
  server_counters::bump(context_.counters.cmd_meta);
  server_counters::bump(context_.counters.cmd_set);
  const std::int64_t expires_at = expires_from_wire(request.ttl.value_or(0), now_);
  const store_outcome outcome = context_.store.store(
      store_request{mode, tokens_[1], data, request.client_flags.value_or(0), expires_at, request.compare.value_or(0)},
      now_);
  const echo about{tokens_[1], request.client_flags.value_or(0), outcome.cas, data.size(), ttl_left(expires_at, now_)};
  switch (outcome.result) {
    case store_result::stored: if (!request.quiet) reply("HD", tokens_, 3, about, out); break;
    case store_result::not_stored: reply("NS", tokens_, 3, about, out); break;
    case store_result::exists: reply("EX", tokens_, 3, about, out); break;
    case store_result::not_found: reply("NF", tokens_, 3, about, out); break;
    case store_result::too_large: out += wire::too_large; break;
    case store_result::out_of_memory: out += wire::out_of_memory; break;
  }
  return step::done;
}

void session::meta_delete(std::string& out) {
  server_counters::bump(context_.counters.cmd_meta);
  if (tokens_.size() < 2 || !wire::valid_key(tokens_[1])) {
    out += wire::bad_format;
    return;
  }
  meta_request request;
  if (!parse_flags(tokens_, 2, "CqOk", request, out)) return;
  const remove_result result = context_.store.remove(tokens_[1], request.compare.value_or(0), now_);
  const echo about{tokens_[1]};
  auto& counters = context_.counters;
  switch (result) {
    case remove_result::deleted:
      server_counters::bump(counters.delete_hits);
      if (!request.quiet) reply("HD", tokens_, 2, about, out);
      break;
    case remove_result::not_found:
      server_counters::bump(counters.delete_misses);
      if (!request.quiet) reply("NF", tokens_, 2, about, out);
      break;
    case remove_result::exists: reply("EX", tokens_, 2, about, out); break;
  }
}

void session::meta_arith(std::string& out) {
  server_counters::bump(context_.counters.cmd_meta);
  if (tokens_.size() < 2 || !wire::valid_key(tokens_[1])) {
    out += wire::bad_format;
    return;
  }
  meta_request request;
  if (!parse_flags(tokens_, 2, "NJDTMqOktcv", request, out)) return;
  arith_request arith;
  arith.key = tokens_[1];
  switch (request.mode) {
    case 0: case 'I': case 'i': case '+': arith.increment = true; break;
    case 'D': case 'd': case '-': arith.increment = false; break;
    default: out += wire::invalid_flag; return;
  }
  arith.delta = request.delta.value_or(1);
  arith.compare_cas = request.compare.value_or(0);
  arith.initial = request.initial.value_or(0);
  if (request.vivify) arith.vivify_expires = expires_from_wire(*request.vivify, now_);
  if (request.ttl) arith.new_expires = expires_from_wire(*request.ttl, now_);
  const arith_outcome outcome = context_.store.arith(arith, now_);
  auto& counters = context_.counters;
  const bool hit = outcome.result == arith_result::ok;
  server_counters::bump(arith.increment ? (hit ? counters.incr_hits : counters.incr_misses)
                                        : (hit ? counters.decr_hits : counters.decr_misses));
  const std::string number = std::to_string(outcome.value);
  const echo about{tokens_[1], 0, outcome.cas, number.size(), ttl_left(outcome.expires_at, now_)};
  switch (outcome.result) {
    case arith_result::ok:
      if (request.value) {
        out += "VA ";
        wire::append_number(out, number.size());
        echo_flags(tokens_, 2, about, out);
        out.append("\r\n").append(number).append("\r\n");
      } else if (!request.quiet) {
        reply("HD", tokens_, 2, about, out);
      }
      break;
    case arith_result::not_found: reply("NF", tokens_, 2, about, out); break;
    case arith_result::exists: reply("EX", tokens_, 2, about, out); break;
    case arith_result::non_numeric: out += wire::non_numeric; break;
  }
}

}  // namespace ferrite::kv
