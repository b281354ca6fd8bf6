// The volatile half of CpNvm (see ferrite/checkpoint/checkpointer.hpp).
#include "ferrite/checkpoint/checkpointer.hpp"

#include <sched.h>
#include <sys/mman.h>
#include <time.h>

#include <algorithm>
#include <bit>
#include <string>

#include "ferrite/error.hpp"
#include "ferrite/pmem/observer.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace ferrite::checkpoint {
namespace {

constexpr std::uint64_t line = checkpointer::line_bytes;

constexpr std::uint64_t arrived_mask = 0xffffffffull;
constexpr std::uint64_t one_participant = std::uint64_t{1} << 32;
constexpr std::uint64_t max_record_lines = (std::uint64_t{1} << 30) / line;  // 1 GiB records
// A listed run's record takes its lines plus a sixth of a block's header line (a header
// line describes up to epoch_log::block_records = 6 records): record_overhead bytes a run,
// rounded up, and a thread's records in one epoch at most one more header line (the last,
// partly filled block) and the end marker line: log_slack. Joining runs in the snapshot
// only lowers that. (A run over max_record_lines is split: one more record per 1 GiB.)
constexpr std::uint64_t record_overhead = (line + epoch_log::block_records - 1) / epoch_log::block_records;
constexpr std::uint64_t log_slack = 2 * line;
constexpr std::size_t prefetch_distance = 8;  // runs ahead
void* const map_failed = MAP_FAILED;          // (a cast the warnings would flag where used)

// Sorts runs by first line: a least-significant-digit radix sort, 12 bits a pass, as many
// passes as the largest first line needs (2 for an image of up to 2^24 lines, 1 GiB),
// through `scratch`. (std::sort took a third of the snapshot's time at 50,000 runs.)
template <class Region>
void sort_runs(std::vector<Region>& runs, std::vector<Region>& scratch) {
    if (runs.size() < 64) {
        std::sort(runs.begin(), runs.end(), [](const Region& a, const Region& b) { return a.first_line < b.first_line; });
        return;
    }
    std::uint64_t top = 0;
    for (const auto& r : runs) top |= r.first_line;
    constexpr unsigned bits = 12;
    constexpr std::size_t buckets = std::size_t{1} << bits;
    scratch.resize(runs.size());
    std::vector<std::uint32_t> count(buckets);
    for (unsigned shift = 0; shift == 0 || (top >> shift) != 0; shift += bits) {
        std::fill(count.begin(), count.end(), 0);
        for (const auto& r : runs) ++count[(r.first_line >> shift) & (buckets - 1)];
        std::uint32_t sum = 0;
        for (auto& c : count) {
            const auto n = c;
            c = sum;
            sum += n;
        }
        for (const auto& r : runs) scratch[count[(r.first_line >> shift) & (buckets - 1)]++] = r;
        runs.swap(scratch);
    }
}

// The coarse clock (the kernel's tick, read from the vDSO's data page: 3 ns here) is used
// for intervals of at least coarse_ticks of its resolution (64 ms at Linux's usual 4 ms tick),
// where its error is at most 1/coarse_ticks of the interval; the precise one (CLOCK_MONOTONIC,
// steady_clock's: 50 ns a read on this VM, 3 ns an operation read every 16th call, about 1 %
// of a tree lookup) for shorter intervals.
constexpr std::int64_t coarse_ticks = 16;

bool coarse_clock_suits(std::chrono::milliseconds interval) noexcept {
    timespec res{};
    if (::clock_getres(CLOCK_MONOTONIC_COARSE, &res) != 0) return false;
    const std::int64_t tick = std::int64_t{res.tv_sec} * 1'000'000'000 + res.tv_nsec;
    return tick > 0 && interval.count() > 0 &&
           std::chrono::duration_cast<std::chrono::nanoseconds>(interval).count() >= coarse_ticks * tick;
}

std::int64_t clock_ns(bool coarse) noexcept {
    timespec t{};
    ::clock_gettime(coarse ? CLOCK_MONOTONIC_COARSE : CLOCK_MONOTONIC, &t);
    return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

}  // namespace

checkpointer::checkpointer(epoch_log& log, std::byte* image, checkpoint_options o)
    : log_(log), image_(image), options_(o), lines_(log.geometry().image_bytes / line),
      bitmap_(map_bitmap((lines_ + 63) / 64)),
      coarse_clock_(coarse_clock_suits(o.interval)), threads_(log.geometry().threads),
      last_checkpoint_ns_(clock_ns(coarse_clock_)) {
    if (reinterpret_cast<std::uintptr_t>(image) % line != 0)
        throw usage_error("checkpointer: the volatile image must be 64-byte aligned");
    if (options_.interval.count() < 0) throw usage_error("checkpointer: the interval must not be negative");
    // An epoch committed and not applied (a log not recovered) is the replayer's first job.
    committed_.store(log.committed_epoch(), std::memory_order_relaxed);
    replayed_.store(options_.replay == replay_mode::background ? log.applied_epoch() : log.committed_epoch(),
                    std::memory_order_relaxed);
    if (options_.replay == replay_mode::background && options_.own_replayer)
        replayer_ = std::thread([this] { replayer_main(); });
}

checkpointer::~checkpointer() {
    if (!replayer_.joinable()) return;
    stop_.store(true, std::memory_order_release);
    wake_.fetch_add(1, std::memory_order_release);
    wake_.notify_one();
    replayer_.join();
}

// The own replayer: applies each committed epoch, sleeps (futex) until the next commit; at
// the stop it applies what committed last, so a checkpointer closed cleanly leaves the
// persistent image at its committed epoch.
void checkpointer::replayer_main() noexcept {
    for (;;) {
        const auto w = wake_.load(std::memory_order_acquire);
        while (!failed_.load(std::memory_order_acquire) && replay_pending()) {
        }
        if (stop_.load(std::memory_order_acquire)) return;
        wake_.wait(w, std::memory_order_acquire);
    }
}

bool checkpointer::replay_pending() {
    const auto c = committed_.load(std::memory_order_acquire);
    if (c <= replayed_.load(std::memory_order_relaxed) || failed_.load(std::memory_order_acquire)) return false;
    // Every participant's records of epoch c were sealed before its commit, the commit before
    // committed_ (acquired above): the logs hold epoch c, and no thread writes a log or the
    // log's header until replayed_ says c is applied (wait_for_replay).
    try {
        log_.replay();
    } catch (...) {
        fail(std::current_exception());
        return false;
    }
    replayed_.store(c, std::memory_order_release);
    return true;
}

// Background: a thread about to snapshot waits for the replay of the previous epoch, whose
// records are in the logs it would overwrite. A failed replayer releases it (it throws then).
void checkpointer::wait_for_replay() noexcept {
    const bool simulated = pmem::installed_observer() != nullptr;
    for (unsigned spins = 0; replayed_.load(std::memory_order_acquire) < committed_.load(std::memory_order_acquire) &&
                             !failed_.load(std::memory_order_acquire);
         ++spins) {
        pmem::wait_hint();
        if (!simulated && spins >= 64) ::sched_yield();
    }
}

void checkpointer::join(unsigned t) {
    if (t >= threads_.size())
        throw usage_error("checkpointer: thread " + std::to_string(t) + " has no log (the log has " +
                          std::to_string(threads_.size()) + ")");
    if (threads_[t].joined) throw usage_error("checkpointer: thread " + std::to_string(t) + " joined twice");
    // Not in the middle of a checkpoint: its barriers count the participants they started with.
    for (auto w = barrier_word_.load(std::memory_order_acquire);;) {
        if ((w & arrived_mask) != 0) {
            pmem::wait_hint();
            w = barrier_word_.load(std::memory_order_acquire);
            continue;
        }
        if (barrier_word_.compare_exchange_weak(w, w + one_participant, std::memory_order_acq_rel)) break;
    }
    threads_[t].joined = true;
}

void checkpointer::leave(unsigned t) {
    if (t >= threads_.size() || !threads_[t].joined)
        throw usage_error("checkpointer: thread " + std::to_string(t) + " leaves without having joined");
    if (!threads_[t].runs.empty()) request();  // its marked regions go into one more epoch
    for (auto w = barrier_word_.load(std::memory_order_acquire);;) {
        if (!failed_.load(std::memory_order_acquire) &&
            ((w & arrived_mask) != 0 || due_.load(std::memory_order_acquire))) {
            // Under way or due: take part first. A failure there is every participant's and
            // every later checkpoint's error; leaving (often in a destructor) still succeeds.
            try {
                run_checkpoint(t);
            } catch (const error&) {
                if (!failed_.load(std::memory_order_acquire)) throw;
            }
            w = barrier_word_.load(std::memory_order_acquire);
            continue;
        }
        if (barrier_word_.compare_exchange_weak(w, w - one_participant, std::memory_order_acq_rel)) break;
    }
    threads_[t].joined = false;
}

void checkpointer::own_lines(thread_state& me, std::uint64_t first, std::uint64_t len) {
    if (!me.runs.empty() && me.runs.back().first_line + me.runs.back().lines == first)
        me.runs.back().lines += len;  // continues the last run (a region over several words)
    else
        me.runs.push_back({first, len});
    me.log_need += len * line + record_overhead;
    // Something to commit (is_due): a load first, so that a thread's new lines after the
    // first of an epoch do not write the shared line.
    if (!marked_.load(std::memory_order_relaxed)) marked_.store(true, std::memory_order_relaxed);
}

void checkpointer::request_if_log_half_full(const thread_state& me) noexcept {
    if (me.log_need + log_slack > log_.log_capacity() / 2) request();
}

void checkpointer::mark_slow(unsigned t, const void* p, std::size_t n) {
    // A region inside one line (a tree's slot, a counter): one bit, one load when it is set
    // already (mark()'s inline test, and again here), else one locked bit-test-and-set,
    // whose old bit says whether this thread set it. (A p below the image wraps to a line
    // past the last one and takes the general path, which rejects it.)
    const std::uint64_t at = static_cast<std::uint64_t>(static_cast<const std::byte*>(p) - image_);
    if (one_line_of(at, n)) [[likely]] {
        const std::uint64_t l = at / line, bit = std::uint64_t{1} << (l % 64);
        const auto w = bitmap_word(l / 64);
        if ((w.load(std::memory_order_relaxed) & bit) != 0) return;
        if ((w.fetch_or(bit, std::memory_order_relaxed) & bit) != 0) return;  // another thread's since the load
        auto& me = threads_[t];
        own_lines(me, l, 1);
        request_if_log_half_full(me);
        return;
    }
    if (n == 0) return;
    const std::uint64_t first = line_of(p);
    const std::uint64_t last = line_of(static_cast<const std::byte*>(p) + n - 1);
    if (first > last || last >= lines_)
        throw usage_error("checkpointer::mark: [" + std::to_string(static_cast<const std::byte*>(p) - image_) + ", +" +
                          std::to_string(n) + ") is not inside the volatile image");
    auto& me = threads_[t];
    for (std::uint64_t l = first; l <= last;) {
        const std::uint64_t word = l / 64;
        const std::uint64_t upto = std::min(last, word * 64 + 63);
        const unsigned lo = static_cast<unsigned>(l % 64), hi = static_cast<unsigned>(upto % 64);
        const std::uint64_t mask = (hi == 63 ? ~std::uint64_t{0} : ((std::uint64_t{1} << (hi + 1)) - 1)) &
                                   ~((std::uint64_t{1} << lo) - 1);
        l = upto + 1;
        const auto w = bitmap_word(word);
        if ((w.load(std::memory_order_relaxed) & mask) == mask) continue;  // one load when already marked
        // The lines whose bits this call set are this thread's to log; the others are
        // another thread's (or this thread's, from an earlier mark) already.
        std::uint64_t mine = mask & ~w.fetch_or(mask, std::memory_order_relaxed);
        while (mine != 0) {
            const auto from = static_cast<unsigned>(std::countr_zero(mine));
            const auto len = static_cast<unsigned>(std::countr_one(mine >> from));
            mine &= len == 64 ? 0 : ~(((std::uint64_t{1} << len) - 1) << from);
            own_lines(me, word * 64 + from, len);
        }
    }
    request_if_log_half_full(me);
}

bool checkpointer::is_due(thread_state& me) noexcept {
    if (due_.load(std::memory_order_acquire)) return true;
    if (options_.interval.count() == 0) {  // every call checkpoints, marked or not
        due_.store(true, std::memory_order_release);
        return true;
    }
    // The clock is read every 16th call of a thread (a call costs a few nanoseconds then).
    if (me.calls % 16 != 0) return false;
    const std::int64_t now = clock_ns(coarse_clock_);
    if (now - last_checkpoint_ns_.load(std::memory_order_relaxed) <
        std::chrono::duration_cast<std::chrono::nanoseconds>(options_.interval).count())
        return false;
    // The interval has passed. With nothing marked since the last commit the epoch would hold
    // no record: the interval starts again instead, and no thread stops at a barrier (every
    // 64 ms, at two threads, a wait for the other thread, which may be preempted on a loaded
    // machine, under a read-only load). A line marked after this load goes into the next
    // epoch, as one marked after a checkpoint's barrier 1 does.
    if (!marked_.load(std::memory_order_acquire)) {
        last_checkpoint_ns_.store(now, std::memory_order_relaxed);
        return false;
    }
    due_.store(true, std::memory_order_release);
    return true;
}

std::chrono::nanoseconds checkpointer::until_due() const noexcept {
    if (due_.load(std::memory_order_acquire)) return std::chrono::nanoseconds(0);
    const std::int64_t since = clock_ns(coarse_clock_) - last_checkpoint_ns_.load(std::memory_order_relaxed);
    return std::chrono::duration_cast<std::chrono::nanoseconds>(options_.interval) - std::chrono::nanoseconds(since);
}

bool checkpointer::checkpoint_slow(unsigned t) {
    if (t >= threads_.size() || !threads_[t].joined)
        throw usage_error("checkpointer: thread " + std::to_string(t) + " checkpoints without having joined");
    throw_if_failed();
    if (!is_due(threads_[t])) return false;
    return run_checkpoint(t);
}

bool checkpointer::arrive(std::uint64_t& generation, unsigned barrier) {
    generation = generation_.load(std::memory_order_acquire);
    const auto w = barrier_word_.fetch_add(1, std::memory_order_acq_rel);
    return (w & arrived_mask) + 1 == barrier * (w >> 32);
}

void checkpointer::wait_past(std::uint64_t generation) noexcept {
    const bool simulated = pmem::installed_observer() != nullptr;
    for (unsigned spins = 0; generation_.load(std::memory_order_acquire) == generation; ++spins) {
        pmem::wait_hint();
        if (!simulated && spins >= 256) ::sched_yield();  // threads may outnumber cores
    }
}

void checkpointer::release(bool last_barrier) noexcept {
    if (last_barrier) barrier_word_.fetch_and(~arrived_mask, std::memory_order_acq_rel);
    generation_.fetch_add(1, std::memory_order_acq_rel);
}

void checkpointer::fail(const std::exception_ptr& e) noexcept {
    if (failed_.load(std::memory_order_acquire)) return;
    // Several snapshots may fail at once; the first message is kept.
    std::lock_guard guard(failure_mutex_);
    if (failed_.load(std::memory_order_acquire)) return;
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& x) {
        failure_ = x.what();
    } catch (...) {
        failure_ = "an exception that is not a std::exception";
    }
    failed_.store(true, std::memory_order_release);
}

void checkpointer::throw_if_failed() const {
    if (failed_.load(std::memory_order_acquire))
        throw error("the checkpointer failed during a checkpoint (" + failure_ +
                    "): nothing more is checkpointed in this process; restart it, and recovery resumes "
                    "from the last committed epoch " + std::to_string(log_.committed_epoch()));
}

// The last thread at barrier 2: the epoch's commit record, then its runs copied from the
// volatile image into the persistent one (see the header comment).
void checkpointer::commit_and_apply(std::uint64_t epoch) {
    // Every listed line goes into this epoch, and nobody marks between the barriers: after
    // the release, only the next epoch's marks set it again.
    marked_.store(false, std::memory_order_relaxed);
    if (options_.before_commit) options_.before_commit(epoch);
    log_.commit(epoch);
    if (options_.replay == replay_mode::background) {
        // The replayer applies it from the logs while everyone goes on.
        epochs_.fetch_add(1, std::memory_order_relaxed);
        last_checkpoint_ns_.store(clock_ns(coarse_clock_), std::memory_order_relaxed);
        due_.store(false, std::memory_order_release);
        committed_.store(epoch, std::memory_order_release);
        if (replayer_.joinable()) {
            wake_.fetch_add(1, std::memory_order_release);
            wake_.notify_one();
        }
        return;
    }
    for (const auto& th : threads_) {
        if (th.logged_epoch != epoch) continue;  // not a participant: nothing of it logged
        for (std::size_t i = 0; i < th.runs.size(); ++i) {
            // The volatile image's line, to read (the apply's NT stores need nothing of the
            // persistent image's line: prefetching it would only displace a line of the program's).
            if (i + prefetch_distance < th.runs.size())
                __builtin_prefetch(image_ + th.runs[i + prefetch_distance].first_line * line, 0);
            const auto& r = th.runs[i];
            log_.apply(r.first_line * line, image_ + r.first_line * line, r.lines * line);
        }
    }
    log_.finish_replay();
    committed_.store(epoch, std::memory_order_relaxed);
    replayed_.store(epoch, std::memory_order_release);
    epochs_.fetch_add(1, std::memory_order_relaxed);
    last_checkpoint_ns_.store(clock_ns(coarse_clock_), std::memory_order_relaxed);
    due_.store(false, std::memory_order_release);
}

bool checkpointer::run_checkpoint(unsigned t) {
    throw_if_failed();
    auto& me = threads_[t];
    // (A run over max_record_lines is split into records of 1 GiB, one more header each.)
    const bool too_big =
        me.log_need + me.log_need / (max_record_lines * line) * record_overhead + log_slack > log_.log_capacity();
    // Barrier 1: every participant is at a consistent point. Arrivals count on through
    // barrier 2 (the count is reset only when it releases), so no thread joins or leaves in
    // between. A thread whose records cannot fit raises this checkpoint's abort before it
    // arrives, so all see it after the barrier.
    std::uint64_t g1 = generation_.load(std::memory_order_acquire);
    if (too_big) abort_generation_.store(g1, std::memory_order_release);
    if (arrive(g1, 1))
        release(false);
    else
        wait_past(g1);
    const bool aborted = abort_generation_.load(std::memory_order_acquire) == g1;
    const std::uint64_t epoch = log_.committed_epoch() + 1;
    if (!aborted) {
        // Background: the previous epoch's records must be applied before this thread's log
        // (and, at finish_replay, every log) is written again.
        if (options_.replay == replay_mode::background) wait_for_replay();
        try {  // a thread that fails here still arrives at barrier 2: the others wait for it
            if (failed_.load(std::memory_order_acquire)) throw error("the replayer failed");
            snapshot(t, epoch);
            log_.seal(t);
        } catch (...) {
            fail(std::current_exception());
        }
    }
    // Barrier 2: the last thread commits the epoch and applies it to the persistent image
    // before anyone goes on: from the volatile image, which nobody writes until then, over
    // every participant's runs (written before they arrived, read after).
    std::uint64_t g2 = 0;
    if (arrive(g2, 2)) {
        if (!aborted && !failed_.load(std::memory_order_acquire)) {
            try {
                commit_and_apply(epoch);
            } catch (...) {
                fail(std::current_exception());  // released all the same: nobody waits for ever
            }
        }
        release(true);
    } else {
        wait_past(g2);
    }
    throw_if_failed();
    if (!aborted) {  // the epoch is applied: this thread's runs start again empty
        me.runs.clear();
        me.log_need = 0;
    }
    if (aborted && too_big)
        throw usage_error("checkpointer: thread " + std::to_string(t) + " marked up to " + std::to_string(me.log_need) +
                          " bytes of records in one epoch, its log holds " + std::to_string(log_.log_capacity()) +
                          ": nothing was checkpointed; make the log larger or checkpoint more often");
    return !aborted;
}

void checkpointer::snapshot(unsigned t, std::uint64_t epoch) {
    auto& me = threads_[t];
    // The runs in line order, adjacent ones joined: one record per run of lines, however
    // many mark() calls listed it. This thread set every bit of them, no other thread
    // listed any of their lines.
    sort_runs(me.runs, me.scratch);
    std::size_t out = 0;
    for (std::size_t i = 0; i < me.runs.size(); ++i) {
        if (out > 0 && me.runs[out - 1].first_line + me.runs[out - 1].lines == me.runs[i].first_line)
            me.runs[out - 1].lines += me.runs[i].lines;
        else
            me.runs[out++] = me.runs[i];
    }
    me.runs.resize(out);
    me.logged_epoch = epoch;
    std::uint64_t cleared_word = ~std::uint64_t{0};
    for (std::size_t i = 0; i < me.runs.size(); ++i) {
        const auto& r = me.runs[i];
        // The runs lie all over the image: ask for the lines a few runs ahead, so that their
        // cache misses overlap instead of stalling one after the other.
        if (i + prefetch_distance < me.runs.size()) {
            const auto ahead = me.runs[i + prefetch_distance].first_line;
            __builtin_prefetch(image_ + ahead * line, 0);
            __builtin_prefetch(&bitmap_[ahead / 64], 1);
        }
        for (std::uint64_t l = r.first_line, end = r.first_line + r.lines; l < end;) {
            const std::uint64_t n = std::min(end - l, max_record_lines);
            const auto bytes = n * line;
            if (!log_.append(t, epoch, l * line, image_ + l * line, static_cast<std::uint32_t>(bytes)))
                throw usage_error("checkpointer: thread " + std::to_string(t) + "'s log overflowed below its bound");
            ++me.records;
            me.bytes += bytes;
            l += n;
        }
        // Unmark: a plain store of 0 to each word, no read-modify-write. Between the
        // barriers nobody marks, and every bit set now is a line some participant listed
        // and logs from its own runs, not from the bitmap: a word holding other threads'
        // lines too may be cleared by them as well, with the same 0.
        for (std::uint64_t w = r.first_line / 64; w <= (r.first_line + r.lines - 1) / 64; ++w) {
            if (w == cleared_word) continue;
            bitmap_word(w).store(0, std::memory_order_relaxed);
            cleared_word = w;
        }
    }
}

std::uint64_t checkpointer::line_of(const void* p) const noexcept {
    return static_cast<std::uint64_t>(static_cast<const std::byte*>(p) - image_) / line;
}

// `words` zero words, mapped (the kernel's zero pages until written).
std::unique_ptr<std::uint64_t[], checkpointer::unmap> checkpointer::map_bitmap(std::uint64_t words) {
    const std::size_t bytes = std::max<std::size_t>(words * sizeof(std::uint64_t), 1);
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == map_failed) throw std::bad_alloc();
    return {static_cast<std::uint64_t*>(p), unmap{bytes}};
}

void checkpointer::unmap::operator()(std::uint64_t* p) const noexcept {
    if (p != nullptr) ::munmap(p, bytes);
}

checkpoint_stats checkpointer::stats() const noexcept {
    checkpoint_stats s;
    s.epochs = epochs_.load(std::memory_order_relaxed);
    for (const auto& th : threads_) {
        s.records += th.records;
        s.bytes += th.bytes;
    }
    return s;
}

}  // namespace ferrite::checkpoint
