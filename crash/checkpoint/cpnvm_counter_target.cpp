// crash/checkpoint/cpnvm_counter_target.cpp: `cpnvm-counter`, CpNvm's epoch protocol
// (ferrite/checkpoint/checkpointer.hpp over epoch_log.hpp) under a program that checkpoints
// after every operation.
//
// Root: the epoch_log region (geometry below). The volatile image gives each thread an area
// of 1 + slots lines: a counter line and `slots` data lines. Thread t's operation i (i from
// 0) marks and writes, in the volatile image,
//   its counter line            := i + 1 in word 0, a pattern of (t, i) in words 1..7
//   data line (i % slots)       := words drawn from (seed, t, i)
//   every third operation, data line ((5i + 2) % slots) too, with other words
// and then calls checkpoint() (interval 0: every call is a checkpoint, so the threads run in
// lockstep and epoch e holds operation e - 1 of every thread). The operation returns when
// checkpoint() does, i.e. after its epoch committed.
//
// Runs of odd seeds (two threads or more) replay in the background, the last thread being
// the replayer (checkpoint_targets.hpp): a crash may then fall between a commit and its
// replay, or in the replay while the workers run the next operation.
//
// recover(): epoch_log::open + recover() (validation, then the replay of what committed).
//
// Checker (buffered durability): the persistent image equals, byte for byte, the state
// after some epoch c (replayed from the seed: every thread's operations 0..c-1), with
//   c >= every thread's returned operations   (a returned checkpoint committed its epoch)
//   c <= the most operations any thread had invoked (returned + pending)
// so nothing torn, nothing from an epoch that did not commit, nothing lost that returned.
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "checkpoint_targets.hpp"
#include "ferrite/checkpoint/checkpointer.hpp"
#include "ferrite/checkpoint/epoch_log.hpp"
#include "ferrite/sim/rng.hpp"

namespace ferrite::crash::checkpoint_targets {
namespace {

using checkpoint::checkpointer;
using checkpoint::epoch_log;
using checkpoint::log_geometry;

constexpr std::uint64_t line = 64;
constexpr std::uint64_t slots = 6;
constexpr std::uint64_t log_bytes = 1024;  // an epoch's records: <= 3 lines, 288 bytes

std::uint64_t area_bytes() { return (1 + slots) * line; }
log_geometry geometry_of(const sim::run_config& c) {
    return {workers_of(c), log_bytes, workers_of(c) * area_bytes()};
}

checkpoint::checkpoint_options options_of(const sim::run_config& c) {
    checkpoint::checkpoint_options o{std::chrono::milliseconds(0), {}};
    if (background_run(c)) {
        o.replay = checkpoint::replay_mode::background;
        o.own_replayer = false;  // the run's last thread: the simulator schedules it
    }
    return o;
}

std::uint64_t word_of(std::uint64_t seed, unsigned t, std::uint64_t i, std::uint64_t w) {
    return sim::mix(sim::mix(seed, t * 1000003 + i), w + 1);
}

// Operation i of thread t on an image (volatile, or the checker's model); `mark` is called
// on each line before it is written.
template <class Mark>
void apply_op(std::byte* image, std::uint64_t seed, unsigned t, std::uint64_t i, Mark&& mark) {
    auto* area = image + t * area_bytes();
    const auto write_line = [&](std::byte* l, std::uint64_t first_word, std::uint64_t salt) {
        mark(l);
        auto* words = reinterpret_cast<std::uint64_t*>(l);
        words[0] = first_word;
        for (std::uint64_t w = 1; w < 8; ++w) words[w] = word_of(seed, t, i, w + salt);
    };
    write_line(area, i + 1, 0);
    write_line(area + (1 + i % slots) * line, word_of(seed, t, i, 100), 100);
    if (i % 3 == 0) write_line(area + (1 + (5 * i + 2) % slots) * line, word_of(seed, t, i, 200), 200);
}

struct aligned_free {
    void operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t{line}); }
};
using image_ptr = std::unique_ptr<std::byte[], aligned_free>;
image_ptr zeroed_image(std::uint64_t bytes) {
    image_ptr p(static_cast<std::byte*>(::operator new[](bytes, std::align_val_t{line})));
    std::memset(p.get(), 0, bytes);
    return p;
}

class counter_workload final : public sim::workload {
public:
    counter_workload(pmem::pool& p, const sim::run_config& c)
        : config_(c), geometry_(geometry_of(c)),
          log_(epoch_log::create(static_cast<std::byte*>(p.root_bytes(checkpoint::region_bytes(geometry_))),
                                 checkpoint::region_bytes(geometry_), geometry_)),
          image_(zeroed_image(geometry_.image_bytes)),
          cp_(std::make_unique<checkpointer>(log_, image_.get(), options_of(c))), workers_(workers_of(c)),
          progress_(c.threads) {
        for (unsigned t = 0; t < workers_; ++t) cp_->join(t);
    }

    void run_thread(unsigned tid) override {
        if (tid == workers_) {  // a background run's replayer
            run_replayer([&] { return cp_->replay_pending(); }, finished_, workers_);
            return;
        }
        for (std::uint64_t i = 0; i < config_.ops_per_thread; ++i) {
            progress_.begin(tid);
            apply_op(image_.get(), config_.seed, tid, i, [&](std::byte* l) { cp_->mark(tid, l, line); });
            cp_->checkpoint(tid);
            progress_.end(tid);
        }
        finished_.fetch_add(1, std::memory_order_release);
    }

    const sim::op_progress& progress() const noexcept override { return progress_; }

    void recover(pmem::pool& image) const override {
        const auto bytes = checkpoint::region_bytes(geometry_);
        epoch_log::open(static_cast<std::byte*>(image.root_bytes(bytes)), bytes).recover();
    }

    std::string verify(pmem::pool& image, const sim::progress_snapshot& at_crash) const override {
        const auto bytes = checkpoint::region_bytes(geometry_);
        const auto log = epoch_log::open(static_cast<std::byte*>(image.root_bytes(bytes)), bytes);
        if (log.applied_epoch() != log.committed_epoch())
            return "after recovery the applied epoch " + std::to_string(log.applied_epoch()) +
                   " differs from the committed epoch " + std::to_string(log.committed_epoch());
        std::uint64_t c = 0;
        std::memcpy(&c, log.image(), 8);  // thread 0's counter: the epoch the image holds
        const auto [low, high] = operation_bounds(at_crash, config_.threads);
        if (c < low || c > high)
            return "the image holds epoch " + std::to_string(c) + ", outside [" + std::to_string(low) + ", " +
                   std::to_string(high) + "] (returned and invoked operations at the crash)";
        if (log.committed_epoch() != c)
            return "the image holds epoch " + std::to_string(c) + " but the committed epoch is " +
                   std::to_string(log.committed_epoch());
        auto model = zeroed_image(geometry_.image_bytes);
        for (std::uint64_t i = 0; i < c; ++i)
            for (unsigned t = 0; t < workers_; ++t) apply_op(model.get(), config_.seed, t, i, [](std::byte*) {});
        for (std::uint64_t at = 0; at < geometry_.image_bytes; at += 8)
            if (std::memcmp(model.get() + at, log.image() + at, 8) != 0)
                return "image byte " + std::to_string(at) + " (thread " + std::to_string(at / area_bytes()) +
                       ", line " + std::to_string(at % area_bytes() / line) +
                       ") differs from the state after epoch " + std::to_string(c);
        return {};
    }

private:
    sim::run_config config_;
    log_geometry geometry_;
    epoch_log log_;
    image_ptr image_;
    std::unique_ptr<checkpointer> cp_;
    unsigned workers_;
    std::atomic<unsigned> finished_{0};
    sim::op_progress progress_;
};

}  // namespace

void register_cpnvm_counter_target(sim::target_registry& r) {
    r.add(std::make_unique<sim::simple_target>(
        "cpnvm-counter",
        "CpNvm epochs: each thread marks and writes 2-3 lines of a volatile image, then checkpoints (every call); "
        "the image must equal the state after a committed epoch >= every returned checkpoint (odd seeds: the last "
        "thread replays in the background)",
        [](pmem::pool& p, const sim::run_config& c) { return std::make_unique<counter_workload>(p, c); },
        [](const sim::run_config& c) {
            return std::max<std::uint64_t>(64 * 1024, checkpoint::region_bytes(geometry_of(c)) + 16 * 1024);
        }));
}

}  // namespace ferrite::crash::checkpoint_targets
