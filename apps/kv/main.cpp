// ferrite-kv: a memcached-compatible server (text and meta protocol) on ferrite's engines.
// Options keep memcached's letters where they mean the same thing.
#include "server.hpp"
#include "volatile_engine.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <memory>

namespace {

// "1048576", "512k", "1m" (memcached's -I accepts k and m suffixes).
std::size_t parse_item_size(const std::string& text) {
  std::size_t used = 0;
  const unsigned long long value = std::stoull(text, &used);
  const std::string suffix = text.substr(used);
  if (suffix.empty()) return value;
  if (suffix == "k" || suffix == "K") return value << 10;
  if (suffix == "m" || suffix == "M") return value << 20;
  throw std::invalid_argument("unknown size suffix '" + suffix + "' (use k or m)");
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ferrite::kv;
  server_settings settings;
  std::uint64_t memory_mb = 64;
  std::string item_size = "1m";
  bool no_evict = false;

  CLI::App app{"ferrite-kv: a memcached-compatible key-value server on ferrite"};
  app.add_option("-p,--port", settings.port, "TCP port to listen on (0: any free port, printed)")
      ->capture_default_str()->check(CLI::Range(0, 65535));
  app.add_option("-l,--listen", settings.listen, "interface to listen on (default loopback only)")->capture_default_str();
  app.add_option("-t,--threads", settings.threads, "worker threads, one event loop each")
      ->capture_default_str()->check(CLI::Range(1, 256));
  app.add_option("-m,--memory-limit", memory_mb, "item memory in megabytes")->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 30));
  app.add_option("-c,--conn-limit", settings.max_connections, "most simultaneous connections")
      ->capture_default_str()->check(CLI::Range(1, 1 << 20));
  app.add_option("-I,--max-item-size", item_size, "largest item (key + value), e.g. 1m or 512k")->capture_default_str();
  app.add_flag("-M,--no-evict", no_evict, "refuse stores when memory is full instead of evicting");
  app.add_option("--engine", settings.engine, "storage engine")->capture_default_str()
      ->check(CLI::IsMember({"volatile"}));
  CLI11_PARSE(app, argc, argv);

  try {
    settings.memory_bytes = memory_mb << 20;
    settings.max_item_bytes = parse_item_size(item_size);
    if (settings.max_item_bytes < 1024 || settings.max_item_bytes > (std::size_t{1} << 30)) {
      std::fprintf(stderr, "ferrite-kv: -I %s: the item size must be between 1k and 1024m\n", item_size.c_str());
      return 2;
    }
    settings.evict = !no_evict;
    volatile_engine store({settings.memory_bytes, settings.max_item_bytes, settings.evict});
    server_counters counters;
    server_context context{store, settings, counters, unix_now()};
    server listening(context);
    settings.port = listening.port();
    std::printf("ferrite-kv: listening on %s:%d (engine %s, %d threads, %llu MiB)\n", settings.listen.c_str(),
                settings.port, settings.engine.c_str(), settings.threads,
                static_cast<unsigned long long>(memory_mb));
    std::fflush(stdout);
    listening.run();
    std::printf("ferrite-kv: stopped\n");
    return 0;
  } catch (const std::exception& failure) {
    std::fprintf(stderr, "ferrite-kv: %s\n", failure.what());
    return 1;
  }
}
