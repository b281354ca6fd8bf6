// A session with a volatile engine and no socket, for the protocol tests: feed bytes, read
// replies, as the server does with whatever has arrived.
#pragma once

#include "session.hpp"
#include "volatile_engine.hpp"

#include <string>
#include <string_view>

namespace ferrite::kv::testing {

struct session_harness {
  explicit session_harness(engine_limits limits = {}) : store(limits), context{store, settings, counters, 0} {
    settings.max_item_bytes = limits.max_item_bytes;
    settings.memory_bytes = limits.memory_bytes;
  }

  // Appends `bytes` to what is pending, handles what is complete, returns the replies.
  std::string feed(std::string_view bytes) {
    pending.append(bytes);
    std::string out;
    const session::progress done = protocol.handle(pending, out);
    pending.erase(0, done.consumed);
    closed = closed || done.close;
    return out;
  }

  volatile_engine store;
  server_settings settings;
  server_counters counters;
  server_context context;
  session protocol{context};
  std::string pending;
  bool closed = false;
};

}  // namespace ferrite::kv::testing
