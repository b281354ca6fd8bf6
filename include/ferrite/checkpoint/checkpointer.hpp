// ferrite/checkpoint/checkpointer.hpp: the volatile half of CpNvm: marking, the checkpoint
// barrier, and the epoch protocol over an epoch_log.
//
// Paper: [NVM] ch. 4, Fig. 4.4 (docs/references.md). The program runs on a volatile image
// (`image`, as many bytes as the log's persistent image; offsets are shared). Before its
// first write to a region in an epoch a thread calls mark(); at points where the data are
// consistent and it holds no lock that protects them, it calls checkpoint(). When a
// checkpoint is due, every registered thread stops in checkpoint():
//
//   barrier 1     every participant is at a consistent point: nobody writes the image
//   snapshot      each thread sorts the runs of lines it owns (below) and joins adjacent
//                 ones, appends the image bytes of each run to its log as one record
//                 (epoch_log::append), stores 0 to the bitmap words of its runs, then seals
//                 (epoch_log::seal: the log is written with NT stores, one pfence)
//   barrier 2     the last to arrive commits the epoch (epoch_log::commit); in line
//                 (replay_mode::in_line) it also applies it to the persistent image from the
//                 volatile image over every participant's runs (epoch_log::apply,
//                 finish_replay); in the background (replay_mode::background) it hands the
//                 epoch to the replayer; then it releases the others
//
// so a checkpoint() that returns true returns after its epoch committed, hence durable (in
// line, also applied; in the background, recovery applies it if the replayer did not).
//
// Tracking ([NVM] 4.3.2): one bit per 64-byte line; mark() reads the bitmap word first (one
// load when the lines are marked already), else sets the bits with one fetch_or per word,
// and the lines whose bits *it* set (those the fetch_or found clear) are the calling
// thread's: it lists them as runs (first line, count) on its own list. So every marked line
// is on exactly one thread's list, and the snapshot needs no read-modify-write on the
// shared bitmap: each thread logs its own runs and clears their bitmap words with plain
// stores of 0. That is safe because between the two barriers nobody marks, and every bit
// set then is a line some participant listed: a word holding several threads' lines may be
// cleared by each of them, with the same 0; barrier 2 orders the clearing before any mark of
// the next epoch. (The first version here cleared each line's bit with a fetch_and as it
// copied the line, to decide which of the threads that listed it logs it: a locked
// read-modify-write per line on a bitmap of 1/512 of the image, which took about half of
// the checkpoints' time in a profile of YCSB A, docs/checkpointing.md.)
//
// Replay in line, from the volatile image: between barrier 1 and the release of barrier 2 nobody
// writes the image, so the image holds, for every listed run, exactly the bytes the run's
// record holds; the last thread copies them from there (they were just read by the
// snapshots, hence cached) rather than reading the records back from the logs. The
// persistent image gets the same bytes as from the logs (epoch_log.hpp's argument holds as
// it is); recovery after a crash replays from the logs.
//
// Background replay ([NVM] 4.3's replay threads): the last thread at barrier 2 commits the
// epoch, publishes it (committed_, release) and releases everyone at once; the replayer (the
// checkpointer's own thread, woken by a futex, or a thread of the caller's that calls
// replay_pending(), which the crash simulator schedules as one of its threads) applies it
// FROM THE LOGS (epoch_log::replay: the volatile image is being written again), then
// records it applied (finish_replay: pfence, applied := E, pwb, pfence) and publishes that
// (replayed_). Log reuse: a log holds one epoch, and a thread waits, after barrier 1 and
// before its snapshot appends, until the previous epoch is applied (wait_for_replay), rather
// than double-buffering the logs. Chosen because the media layout stays as it is (no format
// change, recovery unchanged: committed - applied is 0 or 1) and the wait costs nothing at
// the intervals the checkpointer runs at (an epoch's replay, a few milliseconds at most,
// ends long before the next is due: docs/checkpointing.md); a program that checkpoints
// faster than the replayer applies is slowed to the replayer's pace, which double-buffering
// would only postpone by one epoch. Crash consistency, on top of epoch_log.hpp's argument:
//   * a crash after the commit and before or during the replay: committed = E, applied =
//     E - 1, every record of E sealed before the commit; recovery replays E (idempotent:
//     the same bytes again over a half-applied image). Nothing else is written meanwhile:
//     the participants write only the volatile image until their next snapshot;
//   * the next snapshot appends to a log only after applied = E is durable (finish_replay's
//     last pfence comes before replayed_ is published, which wait_for_replay acquires): a
//     log is never overwritten while it holds the only durable copy of a committed,
//     unapplied epoch, and the next commit (E + 1) never finds E unapplied: one epoch at a
//     time;
//   * sync() (program_image) returns when its checkpoint does: after the commit.
// A failure of the replayer (it cannot fail on its own bytes short of a bug) is every
// participant's, as below: the waiting ones are released and throw.
//
// Before barrier 1 a thread checks that its listed runs fit in its log; if not, it raises
// an abort for this checkpoint: after barrier 1 every thread returns false with nothing
// cleared or logged, and that thread throws usage_error (raise log_bytes, or checkpoint
// more often): its marks stay, durability stops advancing, the volatile image is intact.
//
// What differs from [NVM] (and what is not built yet, docs/checkpointing.md):
//   * one replayer, not a pool of replay threads; in line replay is kept as the other mode
//     (the ablation of docs/checkpointing.md); chained log chunks come with the public API;
//   * a checkpoint is due every `interval` (0: at every call), decided by the first thread
//     that sees the time passed (each thread reads the clock every 16th call; the kernel's
//     coarse clock for intervals of 16 of its ticks or more) and shared with the others
//     through a flag; request() makes the next one due at once (the thesis has no such
//     call; sync() uses it), and so does a thread whose marked lines fill half its log. An
//     interval in which no line was marked commits nothing: the interval starts again
//     without a barrier (a read-only phase stops no thread; the thesis checkpoints anyway);
//   * threads join and leave explicitly (join/leave: a leaving thread takes part in a due
//     checkpoint first); program_image's quiescent state is a leave and a join;
// A failure between the barriers (an allocation in a snapshot, a before_commit hook or the
// log throwing) must not leave the other participants waiting for a thread that will never
// arrive: the failing thread records it and still arrives, the last thread commits nothing
// (or stops where it failed) and releases, and every participant throws error("the
// checkpointer failed ...") with the first failure's message. The checkpointer is then
// broken for good (every later checkpoint throws the same; join and leave, which run in
// destructors, still succeed without checkpointing): the persistent
// state is what a crash at that moment leaves (the last committed epoch; an epoch whose
// replay stopped half-way is finished by recovery), so the way on is a restart.
// Waiting: every spin iteration calls pmem::wait_hint() (a yield point under the crash
// simulator), and sched_yield() after a while otherwise (threads may outnumber cores).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ferrite/checkpoint/epoch_log.hpp"
#include "ferrite/checkpoint/replay_mode.hpp"

namespace ferrite::checkpoint {

struct checkpoint_options {
    std::chrono::milliseconds interval{64};  // 0: every checkpoint() call is a checkpoint
    // For tests and tools: called with the epoch by the last thread of each checkpoint, once
    // every thread's records are sealed and before the commit (no thread writes the image
    // between the two barriers, so the image then is the epoch's state).
    std::function<void(std::uint64_t)> before_commit;
    replay_mode replay = replay_mode::in_line;
    // background only: true, the checkpointer runs its own replayer thread (started by the
    // constructor, drained and joined by the destructor); false, the caller runs one thread
    // that calls replay_pending() (the crash simulator schedules it as one of its threads).
    bool own_replayer = true;
};

struct checkpoint_stats {
    std::uint64_t epochs = 0;   // committed by this checkpointer
    std::uint64_t records = 0;  // appended
    std::uint64_t bytes = 0;    // payload bytes appended
};

class checkpointer {
public:
    // The tracking granularity: one bitmap bit per line of the volatile image; the log's
    // records hold whole lines of it.
    static constexpr std::uint64_t line_bytes = 64;

    // `image` is the volatile image: log.geometry().image_bytes bytes, 64-byte aligned.
    checkpointer(epoch_log& log, std::byte* image, checkpoint_options o = {});
    ~checkpointer();  // background, own replayer: replays the committed epoch, joins the thread
    checkpointer(const checkpointer&) = delete;
    checkpointer& operator=(const checkpointer&) = delete;

    // Thread t (< log.geometry().threads) takes part in checkpoints from now on / no more.
    void join(unsigned t);
    void leave(unsigned t);

    // Thread t will write image bytes [p, p + n) in this epoch.
    void mark(unsigned t, const void* p, std::size_t n) {
        // Inline, the common case, a region inside one line (a tree's slot, a counter) whose
        // line is marked already: one load of its bitmap word, no call. Anything else (a
        // bit to set, several lines, a region outside the image) is mark_slow's.
        const std::uint64_t at = static_cast<std::uint64_t>(static_cast<const std::byte*>(p) - image_);
        if (one_line_of(at, n) &&
            (bitmap_word(at / line_bytes / 64).load(std::memory_order_relaxed) &
             (std::uint64_t{1} << (at / line_bytes % 64))) != 0)
            return;
        mark_slow(t, p, n);
    }
    // At a consistent point of thread t: true if an epoch committed in this call (false: not
    // due, or refused because some thread's records could not fit; that thread throws).
    bool checkpoint(unsigned t) {
        // Inline, the common call (a program calls it after every operation): joined, not the
        // 16th call (the clock is read every 16th call of a thread), nothing due, no failure.
        if (t < threads_.size()) {
            auto& me = threads_[t];
            if (me.joined && ++me.calls % 16 != 0 && options_.interval.count() != 0 &&
                !due_.load(std::memory_order_acquire) && !failed_.load(std::memory_order_acquire))
                return false;
        }
        return checkpoint_slow(t);
    }
    // Makes the next checkpoint due whatever the interval.
    void request() noexcept { due_.store(true, std::memory_order_release); }
    // How long until a checkpoint comes due by the interval: zero or less when one is due
    // now (or requested). For a thread that waits for input and wants to wake in time to take
    // part in the next checkpoint rather than force one of its own.
    std::chrono::nanoseconds until_due() const noexcept;

    std::uint64_t epoch() const noexcept { return log_.committed_epoch(); }
    // Background replay, the replayer's step (one thread at a time; with own_replayer the
    // checkpointer's thread): applies the committed epoch that is not applied yet, if any,
    // from the logs; true if it applied one. A failure is every participant's (see below).
    bool replay_pending();
    // The last epoch the replayer applied (background) or the last committed (in line).
    std::uint64_t replayed_epoch() const noexcept { return replayed_.load(std::memory_order_acquire); }
    checkpoint_stats stats() const noexcept;  // while no thread runs a checkpoint

private:
    // mark()'s fast case, shared by the inline test and mark_slow: [at, at + n) (image
    // offsets; n > 0) lies inside one line of the image. (An `at` below the image wraps to a
    // line past the last one and fails the test; n == 0 wraps to a huge n - 1 and fails it.)
    bool one_line_of(std::uint64_t at, std::size_t n) const noexcept {
        return n - 1 < line_bytes && (at & (line_bytes - 1)) + n <= line_bytes && at / line_bytes < lines_;
    }

    struct region {
        std::uint64_t first_line, lines;
    };
    struct alignas(64) thread_state {
        std::vector<region> runs;         // lines whose bits this thread set this epoch
        std::vector<region> scratch;      // the snapshot's sort
        std::uint64_t log_need = 0;       // bytes their records take at most
        std::uint64_t logged_epoch = 0;   // the epoch of its last snapshot
        bool joined = false;
        std::uint64_t calls = 0;  // checkpoint() calls: the clock is read every 16th
        std::uint64_t records = 0, bytes = 0;
    };

    bool checkpoint_slow(unsigned t);   // checkpoint() but for its common case
    void mark_slow(unsigned t, const void* p, std::size_t n);  // mark() but for its common case
    // mark(): lines [first, first + len) are this thread's to log (it set their bits): a new
    // run, or the last one continued, and the log bytes they need.
    void own_lines(thread_state& me, std::uint64_t first, std::uint64_t len);  // may throw std::bad_alloc, as mark()
    // mark(): half the log taken, the next checkpoint comes now rather than at the interval,
    // so a thread that writes much in one interval does not run out of log.
    void request_if_log_half_full(const thread_state& me) noexcept;
    bool is_due(thread_state& me) noexcept;  // me.calls counts this call already
    void snapshot(unsigned t, std::uint64_t epoch);
    // Barrier `barrier` (1 or 2) of a checkpoint over the participants: true in the last
    // thread to arrive, which must call release() (last_barrier: after barrier 2, which
    // resets the arrivals); the others wait_past() the generation it read.
    bool arrive(std::uint64_t& generation, unsigned barrier);
    void wait_past(std::uint64_t generation) noexcept;
    void release(bool last_barrier) noexcept;
    bool run_checkpoint(unsigned t);  // false: refused (an abort)
    void commit_and_apply(std::uint64_t epoch);
    void wait_for_replay() noexcept;  // background: until the committed epoch is applied
    void replayer_main() noexcept;    // the own replayer thread
    void fail(const std::exception_ptr& e) noexcept;  // the first failure is kept
    void throw_if_failed() const;
    std::uint64_t line_of(const void* p) const noexcept;

    epoch_log& log_;
    std::byte* image_;
    checkpoint_options options_;
    std::uint64_t lines_;
    // One bit per line, used through std::atomic_ref: an anonymous mapping whose zero pages
    // the kernel supplies on first touch, so a checkpointer of a large image starts in the
    // same time as one of a small image (a zeroed array of 4 MiB for a 2 GiB image took
    // 0.2-2.4 ms at every open: most of a lazy recovery's time).
    struct unmap {
        std::size_t bytes = 0;
        void operator()(std::uint64_t* p) const noexcept;
    };
    std::unique_ptr<std::uint64_t[], unmap> bitmap_;
    static std::unique_ptr<std::uint64_t[], unmap> map_bitmap(std::uint64_t words);
    std::atomic_ref<std::uint64_t> bitmap_word(std::uint64_t i) const noexcept {
        return std::atomic_ref<std::uint64_t>(bitmap_[i]);
    }
    bool coarse_clock_;  // the interval is read on CLOCK_MONOTONIC_COARSE (checkpointer.cpp)
    std::vector<thread_state> threads_;
    std::atomic<bool> due_{false};
    std::atomic<bool> marked_{false};  // a line was listed since the last commit (is_due)
    std::atomic<std::int64_t> last_checkpoint_ns_;
    // barrier: participants and arrivals in one word (participants << 32 | arrived), and a
    // generation bumped by each release
    std::atomic<std::uint64_t> barrier_word_{0};
    std::atomic<std::uint64_t> generation_{0};
    std::atomic<std::uint64_t> epochs_{0};
    std::atomic<std::uint64_t> abort_generation_{~std::uint64_t{0}};  // barrier 1 that aborts
    // Background replay: the epoch committed last (set after the commit, release) and the
    // last one applied (set by the replayer after finish_replay, release); wake_ counts
    // commits and the stop, for the own replayer's atomic wait.
    std::atomic<std::uint64_t> committed_{0};
    std::atomic<std::uint64_t> replayed_{0};
    std::atomic<std::uint64_t> wake_{0};
    std::atomic<bool> stop_{false};
    std::thread replayer_;
    std::mutex failure_mutex_;
    std::atomic<bool> failed_{false};  // set once, after failure_ (release)
    std::string failure_;              // what failed first, written before failed_
};

}  // namespace ferrite::checkpoint
