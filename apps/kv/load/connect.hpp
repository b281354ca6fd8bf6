// Opening ferrite-kv-load's connections: the server's name is resolved once, every connection
// is a blocking connect() (so a refused or unreachable server is one clear error before any
// thread starts), then made non-blocking with TCP_NODELAY (requests are small and must not wait
// for Nagle's algorithm to merge them).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace ferrite::kv::load {

struct connect_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// `count` connected sockets, or connect_error saying which address failed and why.
std::vector<int> open_connections(const std::string& host, int port, int count);

}  // namespace ferrite::kv::load
