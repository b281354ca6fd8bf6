// One client thread of ferrite-kv-load: an epoll loop over its connections, in three phases.
//
//   prefill   (--prefill) the thread sets keys index, index + T, index + 2T, ... (T threads),
//             16 requests outstanding per connection whatever --depth says, so a large key
//             space fills quickly; it ends when every set is answered.
//   start     every thread waits at one barrier; its completion step (run_window::open) reads
//             the clock once and fixes the warm-up's end and the measurement's end for all.
//   run       each connection keeps `depth` requests outstanding, a new one sent as soon as a
//             reply completes (a closed loop for depth 1), until the measurement's end.
//
// What counts: a reply that completes inside [measure_start, measure_end) counts for throughput
// and for latency (send to complete reply, connection.hpp), whatever phase it was sent in;
// replies completed earlier are warm-up and later ones are not waited for. Every reply is
// checked; a bad one (reply_parser.hpp), a closed connection or a failed system call is an
// error at any time: it is counted, described in the report and the connection is dropped
// (its stream is out of step). A thread whose connections are all gone stops early, and a
// thread that gets no reply for 10 seconds while waiting for one reports that and stops.
//
// The loop is level-triggered: one recv() per readable connection per epoll_wait(), and
// EPOLLOUT is asked for only while a connection has output the socket did not take.
#pragma once

#include "connection.hpp"
#include "options.hpp"
#include "tally.hpp"
#include "workload.hpp"

#include <barrier>
#include <memory>
#include <vector>

namespace ferrite::kv::load {

// The measured window, fixed for all threads at the start barrier.
struct run_window {
  double warmup_seconds = 0;
  double seconds = 0;
  load_clock::time_point opened{};  // prefill done, warm-up begins
  load_clock::time_point measure_start{};
  load_clock::time_point measure_end{};

  // The barrier's completion step: runs once, before any thread passes the barrier.
  struct open {
    run_window* window;
    void operator()() noexcept;
  };
};

class worker {
 public:
  // Takes ownership of `sockets` (connected, non-blocking).
  worker(int index, const load_options& options, const workload& work, const std::vector<int>& sockets,
         std::barrier<run_window::open>& start, const run_window& window);
  ~worker();
  worker(const worker&) = delete;
  worker& operator=(const worker&) = delete;

  void run();
  const tally& result() const noexcept { return tally_; }

 private:
  void prefill();
  void measure();
  template <class Source, class OnReply, class Finished>
  void drive(std::size_t depth, Source&& next_request, OnReply&& on_reply, Finished&& finished);
  void pump(std::size_t slot, std::size_t depth, auto& next_request);
  void drop(std::size_t slot, std::string why);
  std::string where(std::size_t slot) const;

  int index_;
  const load_options& options_;
  const workload& work_;
  std::barrier<run_window::open>& start_;
  const run_window& window_;
  random_source random_;
  int epoll_ = -1;
  std::vector<std::unique_ptr<connection>> connections_;  // null once dropped
  std::vector<bool> watching_output_;                      // EPOLLOUT asked for
  std::size_t live_ = 0;
  tally tally_;
};

}  // namespace ferrite::kv::load
