#include "connection.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ferrite::kv::load {

namespace {

// The input buffer: room for four replies of the largest kind, and never less than 64 KiB.
std::size_t input_capacity(std::size_t value_bytes) {
  return std::max<std::size_t>(64u << 10, 4 * (max_line + value_bytes + 16));
}

}  // namespace

connection::connection(int fd, const workload& work, int depth)
    : fd_(fd), work_(work), ring_(static_cast<std::size_t>(depth)), in_(input_capacity(work.value().size())) {
  out_.reserve(static_cast<std::size_t>(depth) * (work.value().size() + 64));
}

connection::~connection() { ::close(fd_); }

void connection::queue(op kind, std::uint64_t key) {
  char key_buffer[max_key_text];
  const std::string_view key_view = key_text(key, key_buffer);
  if (kind == op::get) {
    out_.append("get ").append(key_view).append("\r\n");
  } else {
    char length[24];
    const auto end = std::to_chars(length, length + sizeof length, work_.value().size()).ptr;
    out_.append("set ").append(key_view).append(" 0 0 ").append(length, end).append("\r\n");
    out_.append(work_.value()).append("\r\n");
  }
  ring_[(head_ + count_) % ring_.size()] = {kind, key, {}};
  ++count_;
  ++unstamped_;
}

io_result connection::send() {
  if (unstamped_ != 0) {
    // The send time of every request queued since the last call: the clock just before send().
    const load_clock::time_point now = load_clock::now();
    for (std::size_t i = count_ - unstamped_; i < count_; ++i) ring_[(head_ + i) % ring_.size()].sent = now;
    unstamped_ = 0;
  }
  while (sent_ < out_.size()) {
    const ssize_t n = ::send(fd_, out_.data() + sent_, out_.size() - sent_, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return {};  // the worker waits for EPOLLOUT
      return {false, "send failed", errno};
    }
    sent_ += static_cast<std::size_t>(n);
  }
  out_.clear();  // keeps its capacity
  sent_ = 0;
  return {};
}

io_result connection::read_some(load_clock::time_point& now) {
  if (in_end_ == in_.size()) {  // move the unparsed rest to the front; it is less than one reply
    std::memmove(in_.data(), in_.data() + in_begin_, in_end_ - in_begin_);
    in_end_ -= in_begin_;
    in_begin_ = 0;
  }
  ssize_t n;
  do {
    n = ::recv(fd_, in_.data() + in_end_, in_.size() - in_end_, 0);
  } while (n < 0 && errno == EINTR);
  // The completion time of every reply these bytes finish: the clock just after recv().
  now = load_clock::now();
  if (n > 0) {
    in_end_ += static_cast<std::size_t>(n);
    return {};
  }
  if (n == 0) return {false, "the server closed the connection", 0};
  if (errno == EAGAIN || errno == EWOULDBLOCK) return {};
  return {false, "recv failed", errno};
}

parsed_reply connection::parse_front() const noexcept {
  const std::string_view input(in_.data() + in_begin_, in_end_ - in_begin_);
  const outstanding_request& oldest = ring_[head_];
  if (oldest.kind == op::set) return parse_set_reply(input);
  char key_buffer[max_key_text];
  return parse_get_reply(input, key_text(oldest.key, key_buffer), work_.value().size());
}

std::string connection::input_excerpt() const {
  std::string excerpt;
  for (std::size_t i = in_begin_; i < in_end_ && excerpt.size() < 80; ++i) {
    const char c = in_[i];
    if (c == '\r') excerpt += "\\r";
    else if (c == '\n') excerpt += "\\n";
    else if (c >= 0x20 && c < 0x7f) excerpt += c;
    else excerpt += '?';
  }
  return excerpt;
}

}  // namespace ferrite::kv::load
