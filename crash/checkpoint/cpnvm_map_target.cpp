// crash/checkpoint/cpnvm_map_target.cpp: `cpnvm-map`, the B+-tree ported to CpNvm
// (bench/trees/cpnvm_btree.hpp) in a ferrite::program_image (containers/program_image.hpp),
// checkpointing after every operation.
//
// Root: {heap offset, image anchor}, then a buddy heap holding the image's block. The tree
// object and its nodes (fanout 4: splits and merges within a few operations) live in the
// image. Thread t's operation i draws a key from (seed, t, i) among 48 keys and inserts,
// assigns or erases it, then calls checkpoint() (interval 0: every call commits, so the
// threads run in lockstep and epoch e + 2 holds every thread's operation e; epoch 1 is the
// setup's empty tree). The image's before_commit hook, run by the last thread of each
// checkpoint while no thread writes, keeps a copy of the whole volatile image per epoch: the
// program state the epoch commits.
//
// Runs of odd seeds (two threads or more) replay in the background, the last thread being
// the replayer (checkpoint_targets.hpp).
//
// recover(): the heap's recovery, then the image's (image_store::open, epoch_log::recover:
// validation, replay), the block confirmed, the heap's finish_recovery().
//
// Checker (buffered durability, and the port's marks): the persistent image equals, byte
// for byte, the volatile image copied at the end of its committed epoch c, with c >= every
// returned operation and c <= the most operations any thread had invoked. A write the port
// forgot to mark would leave the persistent image behind the copy.
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bench/trees/cpnvm_btree.hpp"
#include "checkpoint_targets.hpp"
#include "image_history.hpp"
#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/checkpoint/image_store.hpp"
#include "ferrite/containers/program_image.hpp"
#include "ferrite/pmem/primitives.hpp"
#include "ferrite/sim/rng.hpp"

namespace ferrite::crash::checkpoint_targets {
namespace {

using alloc::buddy_heap;
using tree_type = bench::cpnvm_btree<std::uint64_t, std::uint64_t, 4>;

constexpr std::uint64_t heap_bytes = 512 << 10;  // the image block (128 KiB) and the heap's own
constexpr std::uint64_t key_range = 48;

struct root_line {
    std::uint64_t heap_offset;
    std::uint64_t image_anchor;
};

image_options options_for(const sim::run_config& c) {
    image_options o;
    o.image_bytes = 64 << 10;
    o.max_threads = c.threads;
    o.log_bytes = 16 << 10;
    o.interval = std::chrono::milliseconds(0);
    if (background_run(c)) {
        o.replay = checkpoint::replay_mode::background;
        o.own_replayer = false;  // the run's last thread: the simulator schedules it
    }
    return o;
}

class map_workload final : public sim::workload {
public:
    map_workload(pmem::pool& p, const sim::run_config& c) : config_(c), workers_(workers_of(c)), progress_(c.threads) {
        if (tree_type::image != nullptr) throw usage_error("cpnvm-map: one CpNvm tree at a time in a process");
        auto* root = static_cast<std::byte*>(p.root_bytes(64 + heap_bytes));
        root_ = reinterpret_cast<root_line*>(root);
        root_->heap_offset = static_cast<std::uint64_t>(root - p.base()) + 64;
        heap_.reset(new buddy_heap(buddy_heap::create(p, root_->heap_offset, heap_bytes)));
        auto o = options_for(c);
        o.before_commit = [this](std::uint64_t epoch) { history_.keep(epoch, image_->whole_image()); };
        image_ = std::make_unique<program_image>(program_image::create(p, *heap_, root_->image_anchor, o));
        pmem::pwb(root_);
        pmem::pfence();
        tree_type::image = image_.get();
        {
            auto me = image_->register_thread();
            tree_ = new (image_->allocate(sizeof(tree_type))) tree_type();
            image_->set_root("tree", tree_);
            image_->sync();  // epoch 1: the empty tree
        }
        image_->replay_pending();  // (background) epoch 1 applied: the setup is not under test
    }
    ~map_workload() override { tree_type::image = nullptr; }

    void run_thread(unsigned tid) override {
        if (tid == workers_) {  // a background run's replayer
            run_replayer([&] { return image_->replay_pending(); }, finished_, workers_);
            return;
        }
        run_operations(tid);  // and leaves the image, which may take part in one more checkpoint
        finished_.fetch_add(1, std::memory_order_release);
    }

    void run_operations(unsigned tid) {
        auto me = image_->register_thread();
        // Every thread takes part from the first checkpoint on (lockstep epochs).
        registered_.fetch_add(1);
        while (registered_.load() < workers_) pmem::wait_hint();
        for (std::uint64_t i = 0; i < config_.ops_per_thread; ++i) {
            const std::uint64_t r = sim::mix(config_.seed, tid * 1000003 + i);
            const std::uint64_t key = r % key_range;
            progress_.begin(tid);
            switch ((r >> 32) % 3) {
                case 0: tree_->insert(key, r); break;
                case 1: tree_->put(key, r ^ 0x5555); break;
                default: tree_->erase(key); break;
            }
            image_->checkpoint();
            progress_.end(tid);
        }
    }

    const sim::op_progress& progress() const noexcept override { return progress_; }

    void recover(pmem::pool& image) const override {
        const auto* root = static_cast<const root_line*>(image.root_bytes(64 + heap_bytes));
        recover_image_pool(image, root->heap_offset, root->image_anchor);
    }

    std::string verify(pmem::pool& image, const sim::progress_snapshot& at_crash) const override {
        const auto* root = static_cast<const root_line*>(image.root_bytes(64 + heap_bytes));
        return check_recovered_log(image, root->heap_offset, root->image_anchor,
                                   [&](const checkpoint::epoch_log& log, std::uint64_t c) { return check(log, c, at_crash); });
    }

private:
    std::string check(const checkpoint::epoch_log& log, std::uint64_t c, const sim::progress_snapshot& at_crash) const {
        // Epoch 1 is the setup's; operation k of every thread is epoch k + 2.
        const auto [low, high] = operation_bounds(at_crash, config_.threads);
        if (c < low + 1 || c > high + 1)
            return "committed epoch " + std::to_string(c) + " is outside [" + std::to_string(low + 1) + ", " +
                   std::to_string(high + 1) + "] (returned and invoked operations at the crash, plus the setup's epoch)";
        // The tree's lock (its first member) is not state: its bytes change as it is taken
        // and released, unmarked, and after_restart() makes a new one.
        const auto lock_at = static_cast<std::uint64_t>(reinterpret_cast<const std::byte*>(tree_) -
                                                         image_->whole_image().data());
        return history_.compare(log, c, lock_at, lock_at + sizeof(tree_type::lock_type));
    }

    sim::run_config config_;
    unsigned workers_;
    std::atomic<unsigned> finished_{0};
    sim::op_progress progress_;
    root_line* root_ = nullptr;
    std::unique_ptr<buddy_heap> heap_;
    std::unique_ptr<program_image> image_;
    tree_type* tree_ = nullptr;
    std::atomic<unsigned> registered_{0};
    image_history history_;
};

}  // namespace

void register_cpnvm_map_target(sim::target_registry& r) {
    r.add(std::make_unique<sim::simple_target>(
        sim::simple_target(
            "cpnvm-map",
            "the B+-tree ported to CpNvm in a program image, checkpointing after every insert, put or erase; the "
            "persistent image must equal the volatile image at the end of a committed epoch >= every returned one",
            [](pmem::pool& p, const sim::run_config& c) { return std::make_unique<map_workload>(p, c); },
            [](const sim::run_config&) { return std::uint64_t{1} << 20; })
            .with_mutation_scope({"src/checkpoint/"})));
}

}  // namespace ferrite::crash::checkpoint_targets
