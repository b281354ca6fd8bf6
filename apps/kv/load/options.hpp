// ferrite-kv-load's settings and their command line (CLI11). The defaults are a closed loop:
// 2 threads x 8 connections, one request outstanding on each, 90% gets over 10,000 keys of
// 100-byte values, 1 s of warm-up and 5 s measured.
#pragma once

#include <cstdint>
#include <string>

namespace ferrite::kv::load {

struct load_options {
  std::string host = "127.0.0.1";
  int port = 11211;
  int threads = 2;               // -T: client threads, one epoll loop each
  int connections = 8;           // -c: connections per thread
  int depth = 1;                 // requests outstanding per connection (1: closed loop)
  std::uint64_t keys = 10000;    // key space: key:0 .. key:<keys - 1>
  double zipf = 0.0;             // 0: uniform keys; s > 0: Zipf with exponent s (key:0 hottest)
  std::size_t value_bytes = 100;
  double get_ratio = 0.9;        // share of gets; the rest are sets
  double seconds = 5.0;          // measured
  double warmup_seconds = 1.0;   // run, not measured
  bool prefill = false;          // set every key once before the warm-up
  std::uint64_t seed = 1;
};

// Parses argv into `options`. Returns -1 to go on, or the exit status for main (help printed,
// or a usage error explained on stderr).
int parse_options(int argc, char** argv, load_options& options);

}  // namespace ferrite::kv::load
