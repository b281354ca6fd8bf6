#include "reply_parser.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>

namespace ferrite::kv::load {

namespace {

constexpr std::string_view crlf = "\r\n";
constexpr std::string_view end_line = "END\r\n";

// The first line of `input` without its \r\n; `complete` is false when no \r\n came yet.
struct line_view {
  std::string_view text;
  bool complete = false;
  bool too_long = false;
};

line_view first_line(std::string_view input) noexcept {
  const std::size_t at = input.substr(0, max_line + crlf.size()).find(crlf);
  if (at == std::string_view::npos) return {{}, false, input.size() >= max_line + crlf.size()};
  return {input.substr(0, at), true, false};
}

// Takes the next space-separated token off the front of `rest`.
std::string_view next_token(std::string_view& rest) noexcept {
  const std::size_t end = rest.find(' ');
  const std::string_view token = rest.substr(0, end);
  rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
  return token;
}

bool is_number(std::string_view token, std::uint64_t& value) noexcept {
  if (token.empty()) return false;
  const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
  return error == std::errc{} && end == token.data() + token.size();
}

bool starts_with_error(std::string_view line) noexcept {
  return line == "ERROR" || line.starts_with("CLIENT_ERROR") || line.starts_with("SERVER_ERROR");
}

parsed_reply bad(std::string_view why) noexcept { return {reply_kind::bad, 0, why}; }

}  // namespace

parsed_reply parse_get_reply(std::string_view input, std::string_view key, std::size_t value_bytes) noexcept {
  const line_view line = first_line(input);
  if (line.too_long) return bad("reply line longer than 512 bytes");
  if (!line.complete) return {};
  const std::size_t header = line.text.size() + crlf.size();
  if (line.text == "END") return {reply_kind::miss, header, {}};
  if (starts_with_error(line.text)) return bad("error reply to get");
  if (!line.text.starts_with("VALUE ")) return bad("get answered by neither VALUE nor END");

  std::string_view rest = line.text.substr(6);
  const std::string_view replied_key = next_token(rest);
  std::uint64_t flags = 0, bytes = 0, cas = 0;
  if (!is_number(next_token(rest), flags)) return bad("VALUE line without numeric flags");
  if (!is_number(next_token(rest), bytes)) return bad("VALUE line without a numeric length");
  if (!rest.empty() && (!is_number(next_token(rest), cas) || !rest.empty()))
    return bad("VALUE line with extra fields");
  if (replied_key != key) return bad("VALUE for another key than the one asked for");
  if (bytes != value_bytes) return bad("value of another length than the generator stores");

  const std::size_t total = header + value_bytes + crlf.size() + end_line.size();
  if (input.size() < total) {
    // Check what already arrived, so a broken stream is reported without waiting for more.
    const std::string_view after = input.substr(std::min(input.size(), header + value_bytes));
    if (!crlf.starts_with(after.substr(0, crlf.size()))) return bad("value not followed by \\r\\n");
    if (after.size() > crlf.size() && !end_line.starts_with(after.substr(crlf.size())))
      return bad("no END after the value (a second VALUE, or garbage)");
    return {};
  }
  if (input.substr(header + value_bytes, crlf.size()) != crlf) return bad("value not followed by \\r\\n");
  if (input.substr(header + value_bytes + crlf.size(), end_line.size()) != end_line)
    return bad("no END after the value (a second VALUE, or garbage)");
  return {reply_kind::hit, total, {}};
}

parsed_reply parse_set_reply(std::string_view input) noexcept {
  const line_view line = first_line(input);
  if (line.too_long) return bad("reply line longer than 512 bytes");
  if (!line.complete) return {};
  if (line.text == "STORED") return {reply_kind::stored, line.text.size() + crlf.size(), {}};
  if (line.text == "NOT_STORED") return bad("set answered NOT_STORED");
  if (starts_with_error(line.text)) return bad("error reply to set");
  return bad("set answered by something other than STORED");
}

}  // namespace ferrite::kv::load
