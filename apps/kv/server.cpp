#include "server.hpp"

#include "session.hpp"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

namespace ferrite::kv {

namespace {

constexpr std::size_t output_high_water = 4u << 20;  // stop reading a client that does not read
constexpr std::size_t output_low_water = 512u << 10;

struct worker;

struct connection {
  worker* owner = nullptr;
  bufferevent* events = nullptr;
  session protocol;
  std::string replies;
  std::size_t wanted = 0;
  bool closing = false;

  connection(worker* w, server_context& context) : owner(w), protocol(context) {}
};

struct worker {
  server_context* context = nullptr;
  event_base* base = nullptr;
  event* wake = nullptr;
  std::mutex lock;
  std::vector<evutil_socket_t> arrivals;
  std::unordered_set<connection*> open;
  std::thread thread;
  event* idle_timer = nullptr;  // ends an idle wait the engine bounded (worker_idle)
  std::uint64_t batches = 0;  // handled by this worker: a loop pass that added none found it idle
  std::atomic<bool> stopping{false};  // set by the main thread, acted on by the worker itself
};

void close_connection(connection* c) {
  worker* w = c->owner;
  w->open.erase(c);
  bufferevent_free(c->events);
  server_counters::bump(w->context->counters.curr_connections, static_cast<std::uint64_t>(-1));
  delete c;
}

void on_read(bufferevent* events, void* arg);

// Replies go to the socket at once when nothing is queued before them: one send() instead of
// bufferevent's way (ask epoll for writability, wait for the next loop pass, write, stop
// asking), which cost about 7 us of server CPU per request at one request in flight. What
// the socket does not take (a full send buffer, an error for libevent to report) is queued
// on the bufferevent, behind nothing, so the order of replies holds.
void send_replies(bufferevent* events, evbuffer* output, const std::string& replies) {
  std::size_t sent = 0;
  if (evbuffer_get_length(output) == 0) {
    const ssize_t n = ::send(bufferevent_getfd(events), replies.data(), replies.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) sent = static_cast<std::size_t>(n);
  }
  if (sent < replies.size()) bufferevent_write(events, replies.data() + sent, replies.size() - sent);
}

void on_write(bufferevent* /*events*/, void* arg) {
  auto* c = static_cast<connection*>(arg);
  if (c->closing) {
    close_connection(c);
    return;
  }
  // Drained below the low-water mark: read again, and handle what waited meanwhile.
  bufferevent_setwatermark(c->events, EV_WRITE, 0, 0);
  bufferevent_enable(c->events, EV_READ);
  on_read(c->events, c);
}

void on_read(bufferevent* events, void* arg) {
  auto* c = static_cast<connection*>(arg);
  if (c->closing) return;
  evbuffer* input = bufferevent_get_input(events);
  const std::size_t length = evbuffer_get_length(input);
  if (length == 0 || length < c->wanted) return;
  const auto* data = reinterpret_cast<const char*>(evbuffer_pullup(input, -1));
  engine& store = c->owner->context->store;
  store.batch_begin();
  const session::progress done = c->protocol.handle(std::string_view(data, length), c->replies);
  store.batch_end();  // the replies go out after it: a durable engine may wait here
  ++c->owner->batches;
  evbuffer_drain(input, done.consumed);
  c->wanted = done.wanted > done.consumed ? done.wanted - done.consumed : 0;
  auto& counters = c->owner->context->counters;
  server_counters::bump(counters.bytes_read, done.consumed);
  evbuffer* output = bufferevent_get_output(events);
  if (!c->replies.empty()) {
    server_counters::bump(counters.bytes_written, c->replies.size());
    send_replies(c->events, output, c->replies);
    c->replies.clear();
  }
  if (done.close) {
    c->closing = true;
    bufferevent_disable(events, EV_READ);
    if (evbuffer_get_length(output) == 0) close_connection(c);
    // otherwise on_write closes it once the replies are out (write low-water mark 0)
    return;
  }
  if (evbuffer_get_length(output) > output_high_water) {
    bufferevent_disable(events, EV_READ);
    bufferevent_setwatermark(events, EV_WRITE, output_low_water, 0);
  }
}

void on_event(bufferevent* /*events*/, short what, void* arg) {
  if ((what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) != 0) close_connection(static_cast<connection*>(arg));
}

void adopt(worker* w, evutil_socket_t fd) {
  bufferevent* events = bufferevent_socket_new(w->base, fd, BEV_OPT_CLOSE_ON_FREE);
  if (events == nullptr) {
    evutil_closesocket(fd);
    return;
  }
  auto* c = new connection(w, *w->context);
  c->events = events;
  w->open.insert(c);
  bufferevent_setcb(events, on_read, on_write, on_event, c);
  bufferevent_enable(events, EV_READ | EV_WRITE);
}

// A worker's loop. For an engine that follows its workers (engine::wants_worker_hooks), the
// loop runs what is ready without blocking, and tells the engine it is idle before it blocks
// when a pass handled nothing; otherwise it is libevent's loop as it is.
void run_worker(worker* w) {
  engine& store = w->context->store;
  if (!store.wants_worker_hooks()) {
    event_base_loop(w->base, EVLOOP_NO_EXIT_ON_EMPTY);  // waits for connections while it has none
    return;
  }
  store.worker_started([w] { event_active(w->wake, EV_READ, 0); });
  while (!w->stopping.load(std::memory_order_acquire)) {
    const std::uint64_t seen = w->batches;
    event_base_loop(w->base, EVLOOP_NONBLOCK);
    if (w->batches != seen || w->stopping.load(std::memory_order_acquire)) continue;
    if (const auto bound = store.worker_idle()) {
      const auto us = std::chrono::duration_cast<std::chrono::microseconds>(*bound).count();
      const timeval after{static_cast<time_t>(us / 1000000), static_cast<suseconds_t>(us % 1000000)};
      evtimer_add(w->idle_timer, &after);
    }
    event_base_loop(w->base, EVLOOP_ONCE | EVLOOP_NO_EXIT_ON_EMPTY);
    evtimer_del(w->idle_timer);
  }
  store.worker_stopping();
}

void on_wake(evutil_socket_t, short, void* arg) {
  auto* w = static_cast<worker*>(arg);
  if (w->stopping.load(std::memory_order_acquire)) {
    event_base_loopbreak(w->base);  // on the worker's own thread: no cross-thread notify needed
    return;
  }
  std::vector<evutil_socket_t> arrived;
  {
    std::lock_guard held(w->lock);
    arrived.swap(w->arrivals);
  }
  for (const evutil_socket_t fd : arrived) adopt(w, fd);
}

}  // namespace

struct server::impl {
  server_context& context;
  event_base* base = nullptr;
  evconnlistener* listener = nullptr;
  event* terminate = nullptr;
  event* interrupt = nullptr;
  std::vector<std::unique_ptr<worker>> workers;
  std::size_t next = 0;
  int bound_port = 0;

  explicit impl(server_context& c) : context(c) {}

  static void on_accept(evconnlistener*, evutil_socket_t fd, sockaddr*, int, void* arg) {
    auto* self = static_cast<impl*>(arg);
    auto& counters = self->context.counters;
    if (counters.curr_connections.load(std::memory_order_relaxed) >=
        static_cast<std::uint64_t>(self->context.settings.max_connections)) {
      static constexpr std::string_view refusal = "ERROR Too many open connections\r\n";
      [[maybe_unused]] const ssize_t sent = send(fd, refusal.data(), refusal.size(), MSG_NOSIGNAL);
      evutil_closesocket(fd);
      server_counters::bump(counters.rejected_connections);
      return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    evutil_make_socket_nonblocking(fd);
    server_counters::bump(counters.curr_connections);
    server_counters::bump(counters.total_connections);
    worker* w = self->workers[self->next++ % self->workers.size()].get();
    {
      std::lock_guard held(w->lock);
      w->arrivals.push_back(fd);
    }
    event_active(w->wake, EV_READ, 0);
  }

  static void on_signal(evutil_socket_t, short, void* arg) { static_cast<impl*>(arg)->stop(); }

  void stop() {
    event_base_loopbreak(base);
  }
};

server::server(server_context& context) : impl_(std::make_unique<impl>(context)) {
  static std::once_flag threads_on;
  std::call_once(threads_on, [] { evthread_use_pthreads(); });
  std::signal(SIGPIPE, SIG_IGN);
  impl& self = *impl_;
  self.base = event_base_new();
  if (self.base == nullptr) throw std::runtime_error("cannot create an event loop");

  sockaddr_storage address{};
  int address_length = 0;
  const std::string& host = context.settings.listen;
  const auto port = static_cast<std::uint16_t>(context.settings.port);
  const std::string where = host + ":" + std::to_string(context.settings.port);
  auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    address_length = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    address_length = sizeof(sockaddr_in6);
  } else {
    throw std::runtime_error("cannot parse the listen address '" + host + "' (give an IPv4 or IPv6 address)");
  }
  self.listener = evconnlistener_new_bind(self.base, impl::on_accept, &self,
                                          LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_FREE, 1024,
                                          reinterpret_cast<sockaddr*>(&address), address_length);
  if (self.listener == nullptr) {
    throw std::runtime_error("cannot listen on " + where + ": " + std::strerror(errno) +
                             " (is another server on that port? choose one with -p)");
  }
  sockaddr_storage bound{};
  socklen_t bound_length = sizeof bound;
  getsockname(evconnlistener_get_fd(self.listener), reinterpret_cast<sockaddr*>(&bound), &bound_length);
  self.bound_port = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                                : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);

  for (int i = 0; i < context.settings.threads; ++i) {
    auto w = std::make_unique<worker>();
    w->context = &context;
    w->base = event_base_new();
    if (w->base == nullptr) throw std::runtime_error("cannot create a worker's event loop");
    w->wake = event_new(w->base, -1, EV_PERSIST, on_wake, w.get());
    // Firing is all it does: the loop pass it ends returns to run_worker.
    w->idle_timer = evtimer_new(w->base, [](evutil_socket_t, short, void*) {}, nullptr);
    if (w->wake == nullptr || w->idle_timer == nullptr) throw std::runtime_error("cannot create a worker's events");
    self.workers.push_back(std::move(w));
  }
  self.terminate = evsignal_new(self.base, SIGTERM, impl::on_signal, &self);
  self.interrupt = evsignal_new(self.base, SIGINT, impl::on_signal, &self);
  event_add(self.terminate, nullptr);
  event_add(self.interrupt, nullptr);
}

server::~server() {
  impl& self = *impl_;
  for (auto& w : self.workers) {
    if (w->thread.joinable()) {  // run() threw before joining: stop the worker as run() does
      w->stopping.store(true, std::memory_order_release);
      event_active(w->wake, EV_READ, 0);
      w->thread.join();
    }
    for (connection* c : std::vector<connection*>(w->open.begin(), w->open.end())) close_connection(c);
    for (const evutil_socket_t fd : w->arrivals) evutil_closesocket(fd);
    if (w->wake != nullptr) event_free(w->wake);
    if (w->idle_timer != nullptr) event_free(w->idle_timer);
    event_base_free(w->base);
  }
  if (self.terminate != nullptr) event_free(self.terminate);
  if (self.interrupt != nullptr) event_free(self.interrupt);
  if (self.listener != nullptr) evconnlistener_free(self.listener);
  event_base_free(self.base);
}

int server::port() const { return impl_->bound_port; }

void server::run() {
  impl& self = *impl_;
  for (auto& w : self.workers) {
    worker* raw = w.get();
    w->thread = std::thread([raw] { run_worker(raw); });  // until the server stops
  }
  event_base_dispatch(self.base);
  evconnlistener_disable(self.listener);
  // Each worker breaks its own loop when woken with `stopping` set (a loopbreak from this
  // thread was seen to leave a worker in epoll_wait once, at SIGTERM after a long run).
  for (auto& w : self.workers) {
    w->stopping.store(true, std::memory_order_release);
    event_active(w->wake, EV_READ, 0);
  }
  for (auto& w : self.workers) w->thread.join();
}

void server::stop() { impl_->stop(); }

}  // namespace ferrite::kv
