// One client connection's side of the memcached text protocol, without the socket: bytes in,
// replies out. The server feeds it whatever has arrived; it handles every complete request at
// the front (pipelining), leaves a partial one for the next call, and says when the connection
// must close (quit, or a stream it can no longer follow).
//
// Framing follows memcached 1.6: a request is a line ending in \n (\r\n expected); storage
// commands (set, add, replace, append, prepend, cas, ms) are followed by exactly <bytes> of data
// and \r\n. A data block that does not end in \r\n is "CLIENT_ERROR bad data chunk"; a value
// over the item size limit is answered "SERVER_ERROR object too large for cache" and its bytes
// are skipped without being buffered; a line longer than the limit with no end in sight closes
// the connection after "CLIENT_ERROR line too long". Nothing a client sends makes it crash or
// touch an item it did not name: tests/apps/kv/session_fuzz_test.cpp feeds it mutated requests.
#pragma once

#include "server_context.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace ferrite::kv {

class session {
 public:
  explicit session(server_context& context) : context_(context) {}

  struct progress {
    std::size_t consumed = 0;  // bytes of the input handled; the rest must be offered again
    bool close = false;        // reply, then close the connection
    std::size_t wanted = 0;    // input length the next call needs to progress (0: any more)
  };

  // Handles the complete requests at the front of `input`; appends replies to `out`.
  progress handle(std::string_view input, std::string& out);

  // Longest request line accepted: get-like commands may name many keys.
  static constexpr std::size_t max_line = 2048;
  static constexpr std::size_t max_key_list_line = 256 * 1024;

 private:
  enum class step { done, need_more, close };
  step request(std::string_view line, std::string_view rest, std::size_t& data_used, std::string& out);

  // The classic commands (text_commands.cpp).
  step storage(store_mode mode, std::string_view rest, std::size_t& data_used, std::string& out);
  void retrieval(bool with_cas, bool touching, std::string& out);
  void remove(std::string& out);
  void arith(bool increment, std::string& out);
  void touch(std::string& out);
  void flush_all(std::string& out);
  void stats(std::string& out);

  // The meta commands (meta_commands.cpp).
  void meta_get(std::string& out);
  step meta_set(std::string_view rest, std::size_t& data_used, std::string& out);
  void meta_delete(std::string& out);
  void meta_arith(std::string& out);

  // A data block of `bytes` must follow the line: takes it, or asks for more input.
  enum class data_state { ready, need_more, bad_chunk };
  data_state take_data(std::string_view rest, std::size_t bytes, std::size_t& data_used, std::string_view& data);
  [[nodiscard]] bool quiet_suffix(std::size_t plain_count) const;

  server_context& context_;
  std::vector<std::string_view> tokens_;
  std::size_t skip_ = 0;  // bytes of a refused value still to be skipped
  std::int64_t now_ = 0;
  std::size_t wanted_ = 0;  // set by take_data when a data block is incomplete
};

}  // namespace ferrite::kv
