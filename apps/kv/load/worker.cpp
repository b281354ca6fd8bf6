#include "worker.hpp"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ferrite::kv::load {

namespace {

constexpr std::size_t prefill_depth = 16;
constexpr auto stall_limit = std::chrono::seconds(10);
constexpr int poll_milliseconds = 5;  // how late a thread may notice the end of its phase

std::chrono::nanoseconds seconds_to_duration(double seconds) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(seconds));
}

}  // namespace

void run_window::open::operator()() noexcept {
  window->opened = load_clock::now();
  window->measure_start = window->opened + seconds_to_duration(window->warmup_seconds);
  window->measure_end = window->measure_start + seconds_to_duration(window->seconds);
}

worker::worker(int index, const load_options& options, const workload& work, const std::vector<int>& sockets,
               std::barrier<run_window::open>& start, const run_window& window)
    : index_(index), options_(options), work_(work), start_(start), window_(window),
      random_(options.seed + static_cast<std::uint64_t>(index)) {
  const int depth = std::max(options.depth, options.prefill ? static_cast<int>(prefill_depth) : 1);
  for (int fd : sockets) connections_.push_back(std::make_unique<connection>(fd, work, depth));
  watching_output_.assign(connections_.size(), false);
  live_ = connections_.size();
  epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_ < 0) throw std::runtime_error(std::string("epoll_create1: ") + std::strerror(errno));
  for (std::size_t slot = 0; slot < connections_.size(); ++slot) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = slot;
    if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, connections_[slot]->fd(), &event) != 0)
      throw std::runtime_error(std::string("epoll_ctl: ") + std::strerror(errno));
  }
}

worker::~worker() {
  connections_.clear();
  if (epoll_ >= 0) ::close(epoll_);
}

void worker::run() {
  // A failure of the loop itself (epoll) ends this thread's load, as an error, but the thread
  // still arrives at the barrier, or the others would wait for it for ever.
  auto guarded = [this](auto phase) {
    try {
      if (live_ > 0) phase();
    } catch (const std::exception& e) {
      tally_.error("thread " + std::to_string(index_) + ": " + e.what());
      connections_.clear();
      live_ = 0;
    }
  };
  if (options_.prefill) guarded([this] { prefill(); });
  start_.arrive_and_wait();  // every thread, even one whose connections are all gone
  guarded([this] { measure(); });
  connections_.clear();  // outstanding requests are abandoned, not waited for
}

void worker::prefill() {
  const auto threads = static_cast<std::uint64_t>(options_.threads);
  std::uint64_t next = static_cast<std::uint64_t>(index_);
  auto next_request = [&](op& kind, std::uint64_t& key) {
    if (next >= work_.keys()) return false;
    kind = op::set;
    key = next;
    next += threads;
    return true;
  };
  auto on_reply = [&](const outstanding_request&, const parsed_reply& reply, load_clock::time_point) {
    if (reply.kind == reply_kind::stored) ++tally_.prefill_sets;
  };
  drive(prefill_depth, next_request, on_reply, [&](load_clock::time_point) {
    if (next < work_.keys()) return false;
    for (const auto& c : connections_)  // a dropped connection's sets are lost (and reported)
      if (c && c->outstanding() != 0) return false;
    return true;
  });
}

void worker::measure() {
  const load_clock::time_point begin = window_.measure_start;
  const load_clock::time_point end = window_.measure_end;
  auto next_request = [&](op& kind, std::uint64_t& key) {
    kind = work_.next_op(random_);
    key = work_.next_key(random_);
    return true;
  };
  auto on_reply = [&](const outstanding_request& request, const parsed_reply& reply, load_clock::time_point now) {
    if (now < begin || now >= end) return;  // warm-up, or too late
    const auto nanoseconds = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(now - request.sent).count());
    tally_.latency.record(nanoseconds);
    if (request.kind == op::get) {
      ++tally_.gets;
      ++(reply.kind == reply_kind::hit ? tally_.hits : tally_.misses);
      tally_.get_latency.record(nanoseconds);
    } else {
      ++tally_.sets;
      tally_.set_latency.record(nanoseconds);
    }
  };
  drive(static_cast<std::size_t>(options_.depth), next_request, on_reply,
        [&](load_clock::time_point now) { return now >= end; });
}

// The event loop of both phases: keeps up to `depth` requests outstanding on every live
// connection (asking next_request(kind, key) for each; it returns false when it has no more),
// hands each good reply to on_reply, and stops when finished(now) says so or no connection is
// left. Bad replies and broken connections are errors here, so the phases see good replies only.
template <class Source, class OnReply, class Finished>
void worker::drive(std::size_t depth, Source&& next_request, OnReply&& on_reply, Finished&& finished) {
  for (std::size_t slot = 0; slot < connections_.size(); ++slot)
    if (connections_[slot]) pump(slot, depth, next_request);

  std::vector<epoll_event> events(connections_.size() + 1);
  load_clock::time_point progress = load_clock::now();  // the last reply
  while (live_ > 0) {
    const int ready = ::epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), poll_milliseconds);
    if (ready < 0 && errno != EINTR) throw std::runtime_error(std::string("epoll_wait: ") + std::strerror(errno));
    for (int i = 0; i < ready; ++i) {
      const std::size_t slot = events[static_cast<std::size_t>(i)].data.u64;
      if (!connections_[slot]) continue;
      connection& c = *connections_[slot];
      if (events[static_cast<std::size_t>(i)].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
        std::string bad;
        const io_result io = c.receive([&](const outstanding_request& request, const parsed_reply& reply,
                                           load_clock::time_point now) {
          progress = now;
          if (reply.kind == reply_kind::bad) {
            bad = std::string(reply.problem) + " (" + (request.kind == op::get ? "get" : "set") +
                  " key:" + std::to_string(request.key) + "; the reply began '" + c.input_excerpt() + "')";
            return;
          }
          on_reply(request, reply, now);
        });
        if (!bad.empty()) {
          drop(slot, std::move(bad));
          continue;
        }
        if (!io.ok) {
          drop(slot, std::string(io.problem) + (io.error_number ? std::string(": ") + std::strerror(io.error_number) : ""));
          continue;
        }
      }
      pump(slot, depth, next_request);
    }
    const load_clock::time_point now = load_clock::now();
    if (finished(now)) return;
    if (now - progress > stall_limit) {
      for (std::size_t slot = 0; slot < connections_.size(); ++slot)
        if (connections_[slot] && connections_[slot]->outstanding() != 0) drop(slot, "no reply for 10 seconds");
      progress = now;
    }
  }
}

// Tops a connection up to `depth` outstanding requests, sends, and watches for the socket
// taking more output only while some is left.
void worker::pump(std::size_t slot, std::size_t depth, auto& next_request) {
  connection& c = *connections_[slot];
  op kind;
  std::uint64_t key;
  while (c.outstanding() < depth && next_request(kind, key)) c.queue(kind, key);
  const io_result io = c.send();
  if (!io.ok) {
    drop(slot, std::string(io.problem) + ": " + std::strerror(io.error_number));
    return;
  }
  if (c.output_pending() != watching_output_[slot]) {
    watching_output_[slot] = c.output_pending();
    epoll_event event{};
    event.events = EPOLLIN | (c.output_pending() ? EPOLLOUT : 0u);
    event.data.u64 = slot;
    if (::epoll_ctl(epoll_, EPOLL_CTL_MOD, c.fd(), &event) != 0)
      throw std::runtime_error(std::string("epoll_ctl: ") + std::strerror(errno));
  }
}

void worker::drop(std::size_t slot, std::string why) {
  tally_.error(where(slot) + ": " + why);
  ++tally_.connections_lost;
  ::epoll_ctl(epoll_, EPOLL_CTL_DEL, connections_[slot]->fd(), nullptr);
  connections_[slot].reset();
  --live_;
}

std::string worker::where(std::size_t slot) const {
  return "thread " + std::to_string(index_) + " connection " + std::to_string(slot);
}

}  // namespace ferrite::kv::load
