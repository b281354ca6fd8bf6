// ferrite-kv: a memcached-compatible server (text and meta protocol) on ferrite's engines.
// Options keep memcached's letters where they mean the same thing.
#include "cpnvm_engine.hpp"
#include "server.hpp"
#include "soft_engine.hpp"
#include "volatile_engine.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <memory>

namespace {

// "1048576", "512k", "1m", "2g" (memcached's -I accepts k and m suffixes).
std::uint64_t parse_size(const std::string& what, const std::string& text) {
  std::size_t used = 0;
  unsigned long long value = 0;
  try {
    value = std::stoull(text, &used);
  } catch (const std::exception&) {
    throw std::invalid_argument(what + " '" + text + "' is not a size (e.g. 1048576, 512k, 1m, 2g)");
  }
  const std::string suffix = text.substr(used);
  if (suffix.empty()) return value;
  if (suffix == "k" || suffix == "K") return value << 10;
  if (suffix == "m" || suffix == "M") return value << 20;
  if (suffix == "g" || suffix == "G") return value << 30;
  throw std::invalid_argument(what + " '" + text + "': unknown suffix '" + suffix + "' (use k, m or g)");
}

void print_recovery(const std::string& pool, const ferrite::kv::recovery_report& r, const char* parts) {
  std::printf("ferrite-kv: pool %s %s: %llu items in %.1f ms (%s)%s\n", pool.c_str(),
              r.created ? "created" : (r.crashed ? "recovered after a crash" : "opened"),
              static_cast<unsigned long long>(r.items), r.milliseconds, parts,
              r.freed_leftovers != 0 ? (", freed " + std::to_string(r.freed_leftovers) +
                                        " blocks of interrupted writes").c_str() : "");
}

std::string milliseconds(const char* a, double x, const char* b, double y, const char* c, double z) {
  char text[160];
  std::snprintf(text, sizeof text, "%s %.1f, %s %.1f, %s %.1f", a, x, b, y, c, z);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ferrite::kv;
  server_settings settings;
  std::uint64_t memory_mb = 64;
  std::string item_size = "1m";
  bool no_evict = false;
  std::string pool_size;
  std::string durability = "epoch";
  unsigned epoch_ms = 64;

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
      ->check(CLI::IsMember({"volatile", "soft", "cpnvm"}));
  app.add_option("--durability", durability, "cpnvm: epoch (reply at once; a crash may lose the last epoch's "
                                             "writes) or sync (reply once the write's epoch is durable)")
      ->capture_default_str()->check(CLI::IsMember({"epoch", "sync"}));
  app.add_option("--epoch-ms", epoch_ms, "cpnvm: how often an epoch commits under load")->capture_default_str()
      ->check(CLI::Range(1u, 60000u));
  app.add_option("--pool", settings.pool, "pool file of a durable engine (created when missing; a bare name "
                                          "lives in $FERRITE_POOL_DIR, default /dev/shm)");
  app.add_option("--size", pool_size, "size of a new pool, e.g. 256m or 4g (default: soft 256m; cpnvm what "
                                      "the image of -m megabytes and the thread logs need)");
  CLI11_PARSE(app, argc, argv);

  try {
    settings.memory_bytes = memory_mb << 20;
    settings.max_item_bytes = parse_size("-I", item_size);
    if (settings.max_item_bytes < 1024 || settings.max_item_bytes > largest_item_limit) {
      std::fprintf(stderr, "ferrite-kv: -I %s: the item size must be between 1k and 1024m\n", item_size.c_str());
      return 2;
    }
    settings.evict = !no_evict;
    std::unique_ptr<engine> store;
    if (settings.engine != "volatile" && settings.pool.empty()) {
      std::fprintf(stderr, "ferrite-kv: --engine %s needs --pool PATH (the file that keeps the items)\n",
                   settings.engine.c_str());
      return 2;
    }
    if (settings.engine == "soft") {
      soft_engine_options options;
      options.pool = settings.pool;
      options.size = parse_size("--size", pool_size.empty() ? "256m" : pool_size);
      options.max_item_bytes = settings.max_item_bytes;
      options.evict = settings.evict;
      auto durable = std::make_unique<soft_engine>(options);
      const recovery_report& r = durable->recovery();
      print_recovery(settings.pool, r, milliseconds("pool", r.pool_milliseconds, "index", r.index_milliseconds,
                                                    "items", r.milliseconds - r.pool_milliseconds - r.index_milliseconds).c_str());
      settings.memory_bytes = durable->stats().limit_bytes;
      store = std::move(durable);
    } else if (settings.engine == "cpnvm") {
      cpnvm_engine_options options;
      options.pool = settings.pool;
      options.size = pool_size.empty() ? 0 : parse_size("--size", pool_size);
      options.memory_bytes = settings.memory_bytes;
      options.max_item_bytes = settings.max_item_bytes;
      options.evict = settings.evict;
      options.mode = durability == "sync" ? ferrite::kv::durability::sync : ferrite::kv::durability::epoch;
      options.interval = std::chrono::milliseconds(epoch_ms);
      options.worker_threads = static_cast<unsigned>(settings.threads);
      auto durable = std::make_unique<cpnvm_engine>(options);
      const recovery_report& r = durable->recovery();
      print_recovery(settings.pool, r, milliseconds("pool", r.pool_milliseconds, "image", r.index_milliseconds,
                                                    "table", r.milliseconds - r.pool_milliseconds - r.index_milliseconds).c_str());
      std::printf("ferrite-kv: durability %s, an epoch every %u ms at most, epoch %llu committed\n", durability.c_str(),
                  epoch_ms, static_cast<unsigned long long>(durable->committed_epoch()));
      settings.memory_bytes = durable->stats().limit_bytes;
      store = std::move(durable);
    } else {
      store = std::make_unique<volatile_engine>(engine_limits{settings.memory_bytes, settings.max_item_bytes, settings.evict});
    }
    server_counters counters;
    server_context context{*store, settings, counters, unix_now()};
    server listening(context);
    settings.port = listening.port();
    std::printf("ferrite-kv: listening on %s:%d (engine %s, %d threads, %llu MiB)\n", settings.listen.c_str(),
                settings.port, settings.engine.c_str(), settings.threads,
                static_cast<unsigned long long>(settings.memory_bytes >> 20));
    std::fflush(stdout);
    listening.run();
    std::printf("ferrite-kv: stopped\n");
    return 0;
  } catch (const std::exception& failure) {
    std::fprintf(stderr, "ferrite-kv: %s\n", failure.what());
    return 1;
  }
}
