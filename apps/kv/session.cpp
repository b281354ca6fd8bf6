// Framing and dispatch of the memcached text protocol (session.hpp has the rules).
#include "session.hpp"

#include "expiry.hpp"
#include "wire.hpp"

#include <algorithm>

namespace ferrite::kv {

namespace {

// get, gets, gat, gats and mg may carry long key lists; every other line is short.
bool names_keys(std::string_view line) {
  for (const std::string_view command : {"get ", "gets ", "gat ", "gats ", "mg "}) {
    if (line.substr(0, command.size()) == command) return true;
  }
  return false;
}

}  // namespace

session::progress session::handle(std::string_view input, std::string& out) {
  progress result;
  now_ = unix_now();
  std::size_t pos = 0;
  while (pos < input.size()) {
    if (skip_ > 0) {
      const std::size_t skipped = std::min(skip_, input.size() - pos);
      pos += skipped;
      skip_ -= skipped;
      continue;
    }
    const std::string_view rest = input.substr(pos);
    const std::size_t limit = names_keys(rest) ? max_key_list_line : max_line;
    const std::size_t newline = rest.substr(0, limit + 1).find('\n');
    if (newline == std::string_view::npos) {
      if (rest.size() > limit) {
        out += wire::line_too_long;
        result.close = true;
        pos = input.size();
      }
      break;
    }
    std::string_view line = rest.substr(0, newline);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::size_t data_used = 0;
    wanted_ = 0;
    const step done = request(line, rest.substr(newline + 1), data_used, out);
    if (done == step::need_more) {
      result.wanted = pos + newline + 1 + wanted_;
      break;
    }
    pos += newline + 1 + data_used;
    if (done == step::close) {
      result.close = true;
      break;
    }
  }
  result.consumed = pos;
  return result;
}

session::data_state session::take_data(std::string_view rest, std::size_t bytes, std::size_t& data_used,
                                       std::string_view& data) {
  if (rest.size() < bytes + 2) {
    wanted_ = bytes + 2;  // counted from the end of the request line
    return data_state::need_more;
  }
  data_used = bytes + 2;
  if (rest[bytes] != '\r' || rest[bytes + 1] != '\n') return data_state::bad_chunk;
  data = rest.substr(0, bytes);
  return data_state::ready;
}

bool session::quiet_suffix(std::size_t plain_count) const {
  return tokens_.size() == plain_count + 1 && tokens_.back() == "noreply";
}

session::step session::request(std::string_view line, std::string_view rest, std::size_t& data_used,
                               std::string& out) {
  wire::tokenize(line, tokens_);
  if (tokens_.empty()) {
    out += wire::error;
    return step::done;
  }
  const std::string_view command = tokens_[0];
  if (command == "get") retrieval(false, false, out);
  else if (command == "gets") retrieval(true, false, out);
  else if (command == "gat") retrieval(false, true, out);
  else if (command == "gats") retrieval(true, true, out);
  else if (command == "set") return storage(store_mode::set, rest, data_used, out);
  else if (command == "add") return storage(store_mode::add, rest, data_used, out);
  else if (command == "replace") return storage(store_mode::replace, rest, data_used, out);
  else if (command == "append") return storage(store_mode::append, rest, data_used, out);
  else if (command == "prepend") return storage(store_mode::prepend, rest, data_used, out);
  else if (command == "cas") return storage(store_mode::cas, rest, data_used, out);
  else if (command == "delete") remove(out);
  else if (command == "incr") arith(true, out);
  else if (command == "decr") arith(false, out);
  else if (command == "touch") touch(out);
  else if (command == "mg") meta_get(out);
  else if (command == "ms") return meta_set(rest, data_used, out);
  else if (command == "md") meta_delete(out);
  else if (command == "ma") meta_arith(out);
  else if (command == "mn") out += "MN\r\n";
  else if (command == "flush_all") flush_all(out);
  else if (command == "stats") stats(out);
  else if (command == "version") out.append("VERSION ").append(server_version).append("\r\n");
  else if (command == "verbosity" && tokens_.size() >= 2 && tokens_.size() <= 3) {
    if (tokens_.back() != "noreply") out += "OK\r\n";  // the level is not used
  } else if (command == "quit") {
    return step::close;
  } else {
    out += wire::error;
  }
  return step::done;
}

}  // namespace ferrite::kv
