#include "connect.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace ferrite::kv::load {

namespace {

struct addrinfo_deleter {
  void operator()(addrinfo* list) const noexcept { ::freeaddrinfo(list); }
};

// One connected, non-blocking socket to the first address of `list` that accepts, or -1 with
// the last failure in `problem`.
int connect_one(const addrinfo* list, std::string& problem) {
  for (const addrinfo* a = list; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      problem = std::string("socket: ") + std::strerror(errno);
      continue;
    }
    int result;
    do {
      result = ::connect(fd, a->ai_addr, a->ai_addrlen);
    } while (result != 0 && errno == EINTR);
    if (result != 0) {
      problem = std::strerror(errno);
      ::close(fd);
      continue;
    }
    const int on = 1;
    if (::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) != 0 ||
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
      problem = std::string("setting up the socket: ") + std::strerror(errno);
      ::close(fd);
      continue;
    }
    return fd;
  }
  return -1;
}

}  // namespace

std::vector<int> open_connections(const std::string& host, int port, int count) {
  const std::string where = host + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* raw = nullptr;
  if (const int status = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &raw); status != 0)
    throw connect_error("cannot resolve " + host + ": " + ::gai_strerror(status));
  const std::unique_ptr<addrinfo, addrinfo_deleter> addresses(raw);

  std::vector<int> sockets;
  for (int i = 0; i < count; ++i) {
    std::string problem;
    const int fd = connect_one(addresses.get(), problem);
    if (fd < 0) {
      for (int open : sockets) ::close(open);
      throw connect_error("cannot connect to " + where + " (connection " + std::to_string(i + 1) + " of " +
                          std::to_string(count) + "): " + problem +
                          (i == 0 ? " (is the server running, on this port?)" : " (the server's connection limit?)"));
    }
    sockets.push_back(fd);
  }
  return sockets;
}

}  // namespace ferrite::kv::load
