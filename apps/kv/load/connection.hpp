// One client connection of ferrite-kv-load: the requests it has outstanding, in order, and the
// bytes going out and coming in. The worker (worker.hpp) decides what to ask and when; the
// connection turns requests into bytes, puts the send time on them, matches each complete
// reply to the oldest outstanding request (memcached answers a connection's requests in order)
// and checks it (reply_parser.hpp).
//
// Latency is measured from the send() that carries a request's first byte to the recv() that
// completes its reply: `send()` stamps every request queued since the last call with one clock
// read just before the system call, and `receive()` reads the clock once after recv() returns
// and gives that time to every reply the bytes complete. Parsing and bookkeeping happen outside
// both reads. A request that waits in the output buffer because the socket is full keeps its
// first stamp: that wait is the server not reading, and counts.
//
// Buffers are sized once (the input holds at least four largest replies, the output grows to
// `depth` requests and stays there), so the steady state allocates nothing.
#pragma once

#include "reply_parser.hpp"
#include "workload.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ferrite::kv::load {

using load_clock = std::chrono::steady_clock;

struct outstanding_request {
  op kind = op::get;
  std::uint64_t key = 0;
  load_clock::time_point sent{};
};

// The result of socket I/O: the connection is fine, or it is unusable (the reason is a static
// string, with the errno of a failed system call, 0 if none).
struct io_result {
  bool ok = true;
  std::string_view problem;
  int error_number = 0;
};

class connection {
 public:
  // Takes ownership of `fd`, a connected non-blocking TCP socket.
  connection(int fd, const workload& work, int depth);
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  int fd() const noexcept { return fd_; }
  std::size_t outstanding() const noexcept { return count_; }
  std::size_t depth() const noexcept { return ring_.size(); }
  bool output_pending() const noexcept { return sent_ < out_.size(); }

  // Appends a request to the output; it goes out with the next send(). Needs outstanding() < depth().
  void queue(op kind, std::uint64_t key);

  // Sends what the output holds, as far as the socket takes it.
  io_result send();

  // Reads once from the socket and calls on_reply(request, reply, now) for every reply that is
  // now complete, oldest first. A `bad` reply is handed over too and ends the loop: the stream is
  // out of step after it, so the caller drops the connection. The result says whether the
  // connection is still usable: not closed by the server, no error, no bytes that no request
  // asked for.
  template <class OnReply>
  io_result receive(OnReply&& on_reply);

  // The first bytes of unparsed input, printable, for an error message.
  std::string input_excerpt() const;

 private:
  io_result read_some(load_clock::time_point& now);
  parsed_reply parse_front() const noexcept;

  int fd_;
  const workload& work_;
  std::vector<outstanding_request> ring_;  // outstanding requests, a ring of `depth` slots
  std::size_t head_ = 0;                   // the oldest
  std::size_t count_ = 0;
  std::size_t unstamped_ = 0;              // the newest `unstamped_` have not been stamped by send() yet
  std::string out_;
  std::size_t sent_ = 0;
  std::vector<char> in_;
  std::size_t in_begin_ = 0;
  std::size_t in_end_ = 0;
};

template <class OnReply>
io_result connection::receive(OnReply&& on_reply) {
  load_clock::time_point now;
  const io_result io = read_some(now);
  while (count_ > 0) {
    const parsed_reply reply = parse_front();
    if (reply.kind == reply_kind::incomplete) break;
    const outstanding_request request = ring_[head_];
    if (reply.kind == reply_kind::bad) {
      on_reply(request, reply, now);
      return io;
    }
    in_begin_ += reply.length;
    head_ = (head_ + 1) % ring_.size();
    --count_;
    on_reply(request, reply, now);
  }
  if (in_begin_ == in_end_) {
    in_begin_ = in_end_ = 0;
  } else if (count_ == 0) {
    return {false, "the server sent bytes that no request asked for", 0};
  }
  return io;
}

}  // namespace ferrite::kv::load
