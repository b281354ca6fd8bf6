// ferrite-kv's network side: libevent, one event loop per worker thread, the listening socket on
// the main thread handing each accepted connection to the next worker in turn. A connection
// reads into its input buffer, lets its session (session.hpp) handle every complete request and
// writes the replies back; a client that stops reading its replies stops being read (the
// output buffer is bounded), and a client past the connection limit is told so and closed, as
// memcached does.
#pragma once

#include "server_context.hpp"

#include <memory>

namespace ferrite::kv {

class server {
 public:
  // Binds the listening socket (throws std::runtime_error with the reason when it cannot).
  server(server_context& context);
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  // The bound port (the chosen one when the settings asked for port 0).
  [[nodiscard]] int port() const;

  // Serves until SIGTERM or SIGINT, or stop(); then closes every connection.
  void run();
  // Asks run() to return; callable from any thread.
  void stop();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace ferrite::kv
