// Crash-simulation session and the process-wide observer that feeds it
// (see ferrite/sim/session.hpp).
#include "ferrite/sim/session.hpp"

#include "ferrite/sim/stop_the_world.hpp"

namespace ferrite::sim {
namespace {

thread_local session* tls_session = nullptr;
thread_local unsigned tls_tid = 0;

// Forwards every primitive of a bound thread to its session.
class forwarding_observer final : public pmem::persistence_observer {
public:
    void on_pwb(const void* line, const pmem::site& where) noexcept override {
        if (auto* s = tls_session) s->on_pwb(tls_tid, line, where);
    }
    void on_pfence(const pmem::site& where) noexcept override {
        if (auto* s = tls_session) s->on_fence(tls_tid, where, site_kind::pfence);
    }
    void on_psync(const pmem::site& where) noexcept override {
        if (auto* s = tls_session) s->on_fence(tls_tid, where, site_kind::psync);
    }
    void on_nt_store(void* dst, std::size_t bytes, const pmem::site& where) noexcept override {
        if (auto* s = tls_session) s->on_nt_store(tls_tid, dst, bytes, where);
    }
    void on_wait(const pmem::site&) noexcept override {
        if (auto* s = tls_session) s->on_wait(tls_tid);
    }
};

forwarding_observer g_observer;
std::mutex g_install_mutex;
unsigned g_sessions = 0;

}  // namespace

session::session(std::byte* base, std::size_t size, unsigned threads, site_registry& sites,
                 options opts)
    : media_(base, size), pending_(threads), sites_(sites), options_(std::move(opts)) {
    // crash_image() may run while workers are stopped at arbitrary instructions (possibly
    // inside malloc): keep it from allocating in the common case.
    pending_view_.reserve(1 << 16);
    std::lock_guard lock(g_install_mutex);
    if (g_sessions++ == 0) pmem::install_observer(&g_observer);
}

session::~session() {
    std::lock_guard lock(g_install_mutex);
    if (--g_sessions == 0) pmem::install_observer(nullptr);
}

session::binding::binding(session* s, unsigned tid) noexcept
    : prev_session_(tls_session), prev_tid_(tls_tid) {
    tls_session = s;
    tls_tid = tid;
}

session::binding::~binding() {
    tls_session = prev_session_;
    tls_tid = prev_tid_;
}

std::uint64_t session::next_event(unsigned tid) noexcept {
    if (options_.scheduler) options_.scheduler->yield(tid);
    const auto event = events_.fetch_add(1, std::memory_order_relaxed) + 1;
    if (options_.at_event) options_.at_event(event);
    return event;
}

void session::queue_locked(unsigned tid, std::size_t line, std::uint64_t mask,
                           site_registry::site_id id, bool check_redundant) noexcept {
    auto& mine = pending_[tid];
    if (check_redundant) {
        const line_snapshot* newest = nullptr;
        for (auto it = mine.rbegin(); it != mine.rend(); ++it)
            if (it->line == line) {
                newest = &*it;
                break;
            }
        if (media_.nothing_new(line, newest)) sites_.count_redundant_flush(id);
    }
    mine.push_back(media_.snapshot(line, mask));
}

void session::on_pwb(unsigned tid, const void* line, const pmem::site& where) noexcept {
    // Not parked by a stop from here to the end: the site registry's and the session's
    // mutexes are taken below, and a worker parked holding one would block another worker
    // inside its critical section, which the stop then waits for forever (seen in random
    // mode: a worker parked inside site_registry::intern).
    world_stopper::critical_section cs;
    const auto id = sites_.intern(where, site_kind::pwb);
    sites_.count_call(id);
    next_event(tid);
    if (sites_.disabled(id)) return;  // mutation: as if the pwb were not in the program
    std::lock_guard lock(mutex_);
    if (media_.contains(line)) queue_locked(tid, media_.line_of(line), ~0ull, id, true);
}

void session::on_fence(unsigned tid, const pmem::site& where, site_kind kind) noexcept {
    world_stopper::critical_section cs;  // from the start: see on_pwb
    const auto id = sites_.intern(where, kind);
    sites_.count_call(id);
    next_event(tid);
    if (sites_.disabled(id)) return;  // mutation: queued write-backs stay queued
    std::lock_guard lock(mutex_);
    auto& mine = pending_[tid];
    if (mine.empty()) sites_.count_empty_fence(id);
    for (const auto& s : mine) media_.persist(s);
    mine.clear();
}

void session::on_nt_store(unsigned tid, void* dst, std::size_t bytes, const pmem::site& where) noexcept {
    world_stopper::critical_section cs;  // from the start: see on_pwb
    const auto id = sites_.intern(where, site_kind::nt_store);
    sites_.count_call(id);
    next_event(tid);
    // Mutation: the bytes were stored (by a plain store), but nothing makes them durable.
    if (sites_.disabled(id) || bytes == 0) return;
    std::lock_guard lock(mutex_);
    auto* p = static_cast<std::byte*>(dst);
    auto* end = p + bytes;
    while (p < end) {
        if (!media_.contains(p)) return;
        const auto line = media_.line_of(p);
        const auto offset = reinterpret_cast<std::uintptr_t>(p) % line_size;
        const auto n = std::min<std::size_t>(line_size - offset, static_cast<std::size_t>(end - p));
        const std::uint64_t mask = (n == 64 ? ~0ull : ((1ull << n) - 1)) << offset;
        queue_locked(tid, line, mask, id, false);
        p += n;
    }
}

void session::on_wait(unsigned tid) noexcept {
    if (options_.scheduler) options_.scheduler->yield(tid);
}

void session::crash_image(std::uint64_t seed, std::vector<std::byte>& out) {
    std::lock_guard lock(mutex_);
    pending_view_.clear();
    for (const auto& mine : pending_)
        for (const auto& s : mine)
            if (pending_view_.size() < pending_view_.capacity()) pending_view_.push_back(&s);
    rng random(seed);
    media_.crash_image(random, pending_view_, out);
}

}  // namespace ferrite::sim
