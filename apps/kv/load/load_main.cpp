// ferrite-kv-load: a load generator for memcached's text protocol (get and set), written for
// scripts/kv-bench.py because Debian's memcaslap reports mean latency only and Debian has no
// memtier_benchmark. It prints one JSON object (report.hpp) with throughput and latency
// percentiles, and checks every reply.
//
//   ferrite-kv-load -p 11211 -T 2 -c 8 --depth 1 --keys 10000 --value-bytes 100
//                   --get-ratio 0.9 --prefill --warmup-seconds 1 --seconds 5
//
// How it measures (each part in its own file):
//   options.hpp     the settings
//   connect.hpp     T x c connections, opened before any load
//   workload.hpp    which operation and key each request has; the value bytes
//   worker.hpp      one epoll loop per thread: prefill, the start barrier, the measured run,
//                   and which replies count (those completing inside the measured window)
//   connection.hpp  requests outstanding per connection, send and completion times
//   reply_parser.hpp every reply checked against its request
//   histogram.hpp   log-linear latency histogram (<= 0.78% above the true value), per thread,
//                   merged at the end (tally.hpp)
//
// A closed loop (depth 1) measures the latency of the requests it manages to send: when the
// server slows down, fewer requests go out, so the percentiles describe service time under
// this concurrency, not the response time of an open arrival stream (no coordinated-omission
// correction; memcaslap and memtier_benchmark's defaults measure the same way).
//
// Exit status: 0 when every reply was right and some were measured; 1 when a reply was wrong,
// a connection broke or nothing was measured (the JSON is printed all the same, with the first
// errors in "error_samples"); 2 for a usage error or a server that cannot be reached.
#include "connect.hpp"
#include "options.hpp"
#include "report.hpp"
#include "worker.hpp"
#include "workload.hpp"

#include <barrier>
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  using namespace ferrite::kv::load;
  load_options options;
  if (const int status = parse_options(argc, argv, options); status >= 0) return status;

  try {
    const workload work(options.keys, options.zipf, options.get_ratio, options.value_bytes);
    const std::vector<int> sockets = open_connections(options.host, options.port, options.threads * options.connections);

    run_window window{options.warmup_seconds, options.seconds};
    std::barrier<run_window::open> start(options.threads, run_window::open{&window});
    std::vector<std::unique_ptr<worker>> workers;
    for (int t = 0; t < options.threads; ++t) {
      const auto first = sockets.begin() + t * options.connections;
      workers.push_back(std::make_unique<worker>(t, options, work, std::vector<int>(first, first + options.connections),
                                                 start, window));
    }
    const load_clock::time_point launched = load_clock::now();
    {
      std::vector<std::jthread> threads;
      for (auto& w : workers) threads.emplace_back([&w] { w->run(); });
    }  // joined here

    tally total;
    for (const auto& w : workers) total.merge(w->result());
    const double prefill_seconds = std::chrono::duration<double>(window.opened - launched).count();
    const nlohmann::ordered_json report = make_report(options, total, prefill_seconds, options.seconds);
    std::cout << report.dump(2) << std::endl;
    for (const std::string& e : total.error_samples) std::fprintf(stderr, "ferrite-kv-load: %s\n", e.c_str());
    if (total.errors != 0) {
      std::fprintf(stderr, "ferrite-kv-load: %llu errors\n", static_cast<unsigned long long>(total.errors));
      return 1;
    }
    if (total.gets + total.sets == 0) {
      std::fprintf(stderr, "ferrite-kv-load: no request completed in the measured window\n");
      return 1;
    }
    return 0;
  } catch (const connect_error& e) {
    std::fprintf(stderr, "ferrite-kv-load: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ferrite-kv-load: %s\n", e.what());
    return 2;
  }
}
