// Epoch-based reclamation (see ferrite/sync/epoch_domain.hpp for the algorithm and the
// argument; the numbers "argument 1..3" below refer to it).
#include "ferrite/sync/epoch_domain.hpp"

#include <array>
#include <atomic>
#include <cstdlib>
#include <new>
#include <string_view>
#include <utility>
#include <vector>

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ferrite/error.hpp"
#include "ferrite/sync/thread_id.hpp"

namespace ferrite::sync {
namespace {

constexpr std::size_t line = 64;
constexpr unsigned bag_count = 4;        // tags e-3 .. e: indexed by tag mod 4
constexpr std::uint64_t safe_after = 3;  // a bag tagged t runs once E >= t + 3
constexpr unsigned collect_every = 64;   // retires (or unpins with work left) per collect
static_assert((collect_every & (collect_every - 1)) == 0, "collect_every: a power of two");
// With the asymmetric fence an advance costs a system call that interrupts every running
// thread of the process (about 8 us on the project's VM, and the interrupted thread's
// operation with it: the 2-thread p99.9 of 12-17 us in set-mix), so advances are rationed
// (docs/results.md, "Fewer membarriers"):
//   * a collect that retire starts (every 64 retires) advances only if E has not moved
//     since this thread's previous collect: when another thread is advancing, this one's
//     bags become safe at that pace without a system call of its own; alone (no other
//     advancer) it advances every time, which bounds what it holds exactly as before;
//   * a collect that unpin starts (every 64 unpins while anything is held) advances only
//     every 16th time, and then only if the thread retired nothing and E did not move since
//     the previous such check: a thread that retires is served by its own retire collects,
//     one whose nodes others' advances make safe needs none; only a thread that holds nodes
//     while nothing advances (it stopped retiring, the others are idle) pays for it.
// Safety never depends on how often E advances (fewer advances only hold nodes longer).
constexpr unsigned unpin_advance_every = 16;

// The asymmetric fence (the scheme of userspace RCU's membarrier flavour): a pin announces
// with a plain store and no fence; every advance first runs membarrier(PRIVATE_EXPEDITED),
// which makes each running thread of the process execute a full barrier (a thread that is
// not running passed one when it was switched out). Decided once per process: the kernel
// must offer the command and accept the registration; otherwise pins fence themselves.
bool asymmetric_fence() noexcept {
    static const bool on = [] {
        // FERRITE_EPOCH_FENCE=exchange: pins fence themselves (tests run both ways).
        if (const char* f = std::getenv("FERRITE_EPOCH_FENCE"); f != nullptr && std::string_view(f) == "exchange")
            return false;
        const long cmds = ::syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
        if (cmds < 0 || (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
        return ::syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
    }();
    return on;
}

// The heavy side: after it returns, every store another thread made before its implied
// barrier is visible here, and every load it makes after that barrier sees what this thread
// did before the call. A forked child may have lost the registration: it registers again.
// No fallback exists once pins are light, so a failure that persists aborts.
void heavy_fence() noexcept {
    if (::syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0 &&
        (::syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0 ||
         ::syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0))
        std::abort();
    // No fence of our own: the call is a full barrier on the calling thread as well (the
    // kernel's smp_mb on entry and exit), and ThreadSanitizer refuses atomic_thread_fence.
}

// An announcement: (epoch << 1 | 1) while pinned, 0 idle (epoch_domain::announced, unpin).
constexpr bool is_active(std::uint64_t word) noexcept { return (word & 1) != 0; }
constexpr std::uint64_t epoch_of(std::uint64_t word) noexcept { return word >> 1; }

struct retired {
    void* node;
    epoch_domain::reclaim_fn reclaim;
    void* context;
};

struct bag {
    std::uint64_t tag = 0;
    std::vector<retired> items;  // keeps its capacity between epochs
};

}  // namespace

// announcement (its own line), depth, epoch, retires, unpins, unpin_collects and held are in
// record_base (the header: pin and unpin are inline). Owner-private fields belong to the
// thread whose id indexes the record, and to the next thread with that id after it exits
// (sync/thread_id.cpp hands ids over under a mutex, so every access of a later owner happens
// after the earlier owner's).
struct alignas(line) epoch_domain::thread_record : epoch_domain::record_base {
    std::atomic<std::size_t> pending{0};   // = held, for pending() on other threads
    std::array<bag, bag_count> bags{};
    // The rationing of advances (unpin_advance_every): E as this thread's last collect left
    // it, and E and retires at its last unpin check.
    std::uint64_t seen_epoch = 0;
    std::uint64_t unpin_check_epoch = 0;
    unsigned unpin_check_retires = 0;
};

struct alignas(line) epoch_domain::state {
    std::atomic<std::uint64_t> epoch{0};  // E: read by every pin, written by advances
    alignas(line) std::atomic<unsigned> used{0};  // 1 + the highest id with a record
    std::array<std::atomic<thread_record*>, max_thread_ids> records{};
};

namespace {

// Runs one bag. The items are moved aside first, so a reclaim function may retire on the
// same domain (into a fresh vector) without invalidating this loop.
template <class Record>
void run_bag(Record& r, bag& b) noexcept {
    std::vector<retired> work;
    work.swap(b.items);
    for (const retired& x : work) x.reclaim(x.node, x.context);
    r.held -= work.size();
    r.pending.store(r.held, std::memory_order_relaxed);
    work.clear();
    if (b.items.empty()) b.items.swap(work);  // keep the capacity for the next epoch
}

}  // namespace

namespace {
std::atomic<std::uint64_t> g_next_domain_id{1};
}

epoch_domain::epoch_domain()
    : state_(std::make_unique<state>()), epoch_(&state_->epoch),
      id_(g_next_domain_id.fetch_add(1, std::memory_order_relaxed)), light_(asymmetric_fence()) {}

epoch_domain::~epoch_domain() {
    reclaim_all();
    const unsigned used = state_->used.load(std::memory_order_acquire);
    for (unsigned id = 0; id < used; ++id) delete state_->records[id].load(std::memory_order_acquire);
}

epoch_domain::guard::guard(guard&& other) noexcept
    : domain_(other.domain_), record_(std::exchange(other.record_, nullptr)) {}


epoch_domain::guard epoch_domain::pin_slow() {
    state& s = *state_;
    const unsigned id = this_thread_id();
    thread_record* r = s.records[id].load(std::memory_order_acquire);
    if (r == nullptr) [[unlikely]] {
        r = new thread_record;
        // seq_cst, before the first announcement: an advance scan that must see this
        // thread's announcement (argument 1) sees the record and the bound covering it.
        s.records[id].store(r, std::memory_order_seq_cst);
        unsigned used = s.used.load(std::memory_order_seq_cst);
        while (used <= id && !s.used.compare_exchange_weak(used, id + 1, std::memory_order_seq_cst)) {
        }
    }
    tl_pin_cache_ = pin_cache{id_, r};  // this thread's record of this domain from now on
    if (r->depth++ == 0) announce(*r);
    return guard(this, r);
}

void epoch_domain::unpin_collect(record_base& rb) noexcept {
    auto& r = static_cast<thread_record&>(rb);
    if ((++r.unpins & (collect_every - 1)) != 0) return;
    bool advance = true;
    if (light_) {
        advance = false;
        if (++r.unpin_collects % unpin_advance_every == 0) {
            const std::uint64_t now = state_->epoch.load(std::memory_order_relaxed);
            advance = r.retires == r.unpin_check_retires && now == r.unpin_check_epoch;
            r.unpin_check_retires = r.retires;
            r.unpin_check_epoch = now;
        }
    }
    collect(r, false, advance);
}

void epoch_domain::retire(void* node, reclaim_fn reclaim, void* context) {
    thread_record* r = state_->records[this_thread_id()].load(std::memory_order_acquire);
    if (r == nullptr || r->depth == 0)
        throw usage_error(
            "epoch_domain::retire: the calling thread is not pinned; hold a guard from pin() "
            "from before the node is unlinked until after it is retired");
    bag& b = r->bags[r->epoch % bag_count];
    if (b.tag != r->epoch) {
        // An older tag with the same index: tag <= epoch - 4 <= E - 4, safe to run.
        if (!b.items.empty()) run_bag(*r, b);
        b.tag = r->epoch;
    }
    b.items.push_back(retired{node, reclaim, context});
    r->pending.store(++r->held, std::memory_order_relaxed);
    if ((++r->retires & (collect_every - 1)) == 0)
        collect(*r, true, !light_ || state_->epoch.load(std::memory_order_relaxed) == r->seen_epoch);
}

void epoch_domain::collect(thread_record& r, bool pinned, bool advance) noexcept {
    // Pinned, the caller itself holds E at its epoch + 1 at most: one advance can succeed.
    // Idle, up to three (enough to make every bag of this thread safe when nobody lags).
    for (int tries = !advance ? 0 : pinned ? 1 : 3; tries > 0 && try_advance(); --tries) {
    }
    // acquire: the advance to this value followed a scan that read the unpin (release) of
    // every thread that could still reach these nodes (argument 3).
    const std::uint64_t now = state_->epoch.load(std::memory_order_acquire);
    r.seen_epoch = now;
    for (bag& b : r.bags)
        if (!b.items.empty() && b.tag + safe_after <= now) run_bag(r, b);
}

// One attempt to move E from e to e + 1: succeeds only if every active record announced e.
// Never waits. seq_cst: the scan's loads must follow in S the load of E they check against
// (argument 1), and see every record created before its owner's first announcement.
bool epoch_domain::try_advance() noexcept {
    state& s = *state_;
    std::uint64_t e = s.epoch.load(std::memory_order_seq_cst);
    const auto scan = [&] {
        const unsigned used = s.used.load(std::memory_order_seq_cst);
        for (unsigned id = 0; id < used; ++id) {
            const thread_record* r = s.records[id].load(std::memory_order_seq_cst);
            if (r == nullptr) continue;
            const std::uint64_t a = r->announcement.load(std::memory_order_seq_cst);
            if (is_active(a) && epoch_of(a) != e) return false;  // lags: try again later
        }
        return true;
    };
    if (asymmetric_fence()) {
        // A lag already visible fails without the system call; otherwise the heavy fence
        // (after the load of E, before the scan that decides: argument 1') and scan again.
        if (!scan()) return false;
        heavy_fence();
    }
    if (!scan()) return false;
    return s.epoch.compare_exchange_strong(e, e + 1, std::memory_order_seq_cst);
}

void epoch_domain::reclaim_all() {
    state& s = *state_;
    // Until a pass runs nothing: a reclaim function may retire more (into any bag of the
    // calling thread's record, possibly one this pass already emptied).
    for (bool ran = true; ran;) {
        ran = false;
        const unsigned used = s.used.load(std::memory_order_acquire);
        for (unsigned id = 0; id < used; ++id) {
            thread_record* r = s.records[id].load(std::memory_order_acquire);
            if (r == nullptr) continue;
            for (bag& b : r->bags) {
                if (b.items.empty()) continue;
                run_bag(*r, b);
                ran = true;
            }
        }
    }
}

std::size_t epoch_domain::pending() const noexcept {
    const state& s = *state_;
    std::size_t n = 0;
    const unsigned used = s.used.load(std::memory_order_acquire);
    for (unsigned id = 0; id < used; ++id)
        if (const thread_record* r = s.records[id].load(std::memory_order_acquire))
            n += r->pending.load(std::memory_order_relaxed);
    return n;
}

}  // namespace ferrite::sync
