// Checks the server's replies to the two requests ferrite-kv-load sends, in memcached's text
// protocol, one reply at a time from the front of a connection's input:
//
//   get <key>                          ->  VALUE <key> <flags> <bytes>[ <cas>]\r\n<data>\r\nEND\r\n   (hit)
//                                      ->  END\r\n                                                  (miss)
//   set <key> 0 0 <bytes>\r\n<data>\r\n ->  STORED\r\n
//
// Every other answer is `bad`, with the reason: an error reply (ERROR, CLIENT_ERROR,
// SERVER_ERROR), NOT_STORED, a VALUE for another key (replies out of order), a value of another
// length than the generator stores (every key holds value_bytes bytes or nothing), data not
// followed by \r\n, a second VALUE or anything but END after the value, a line of more than
// max_line bytes. A reply that may still be completed by more input is `incomplete`, and
// nothing is consumed: the caller reads more and asks again from the same place, so a reply
// split anywhere by TCP parses the same as a whole one.
//
// The functions neither allocate nor keep state: the reason is a static string, and a caller
// that wants the offending bytes takes them from its own buffer (they start at its front).
#pragma once

#include <cstddef>
#include <string_view>

namespace ferrite::kv::load {

enum class reply_kind { incomplete, hit, miss, stored, bad };

struct parsed_reply {
  reply_kind kind = reply_kind::incomplete;
  std::size_t length = 0;    // bytes of the input this reply takes (0 unless hit, miss or stored)
  std::string_view problem;  // why it is bad (empty otherwise)
};

// The longest reply line accepted ("VALUE " + a 250-byte key + flags, length and CAS fit).
inline constexpr std::size_t max_line = 512;

// The reply to `get key`, whose value (when present) must be value_bytes long.
parsed_reply parse_get_reply(std::string_view input, std::string_view key, std::size_t value_bytes) noexcept;

// The reply to a `set` without noreply.
parsed_reply parse_set_reply(std::string_view input) noexcept;

}  // namespace ferrite::kv::load
