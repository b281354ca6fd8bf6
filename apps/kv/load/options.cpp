#include "options.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>

namespace ferrite::kv::load {

int parse_options(int argc, char** argv, load_options& options) {
  CLI::App app{"ferrite-kv-load: a memcached text-protocol load generator that reports throughput and latency "
               "percentiles as one JSON object on stdout"};
  app.add_option("-s,--host", options.host, "server address (IPv4 or IPv6 literal, or a host name)")
      ->capture_default_str();
  app.add_option("-p,--port", options.port, "server port")->capture_default_str()->check(CLI::Range(1, 65535));
  app.add_option("-T,--threads", options.threads, "client threads, one epoll loop each")
      ->capture_default_str()->check(CLI::Range(1, 256));
  app.add_option("-c,--connections", options.connections, "connections per thread")
      ->capture_default_str()->check(CLI::Range(1, 4096));
  app.add_option("--depth", options.depth, "requests outstanding per connection (1: closed loop, more: pipelined)")
      ->capture_default_str()->check(CLI::Range(1, 1024));
  app.add_option("--keys", options.keys, "key space: key:0 .. key:<keys-1>")
      ->capture_default_str()->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  app.add_option("--zipf", options.zipf, "Zipf exponent of the key choice (0: uniform; key:0 is the hottest)")
      ->capture_default_str()->check(CLI::Range(0.0, 10.0));
  app.add_option("--value-bytes", options.value_bytes, "bytes of every value set")
      ->capture_default_str()->check(CLI::Range(std::size_t{1}, std::size_t{1} << 24));
  app.add_option("--get-ratio", options.get_ratio, "share of gets (the rest are sets)")
      ->capture_default_str()->check(CLI::Range(0.0, 1.0));
  app.add_option("--seconds", options.seconds, "measured seconds")->capture_default_str()->check(CLI::Range(0.01, 86400.0));
  app.add_option("--warmup-seconds", options.warmup_seconds, "seconds run before measuring (not counted)")
      ->capture_default_str()->check(CLI::Range(0.0, 86400.0));
  app.add_flag("--prefill", options.prefill, "set every key once before the warm-up, so gets hit");
  app.add_option("--seed", options.seed, "seed of the key and operation choices (thread i uses seed + i)")
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int status = app.exit(e);
    return status == 0 ? 0 : 2;
  }
  if (options.zipf > 0 && options.keys > (std::uint64_t{1} << 27)) {
    std::fprintf(stderr, "ferrite-kv-load: --zipf keeps a table of 8 bytes per key: use at most 2^27 keys with it\n");
    return 2;
  }
  return -1;
}

}  // namespace ferrite::kv::load
