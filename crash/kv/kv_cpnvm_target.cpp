// crash/kv/kv_cpnvm_target.cpp: `kv-cpnvm`, ferrite-kv's cpnvm engine (apps/kv/cpnvm_engine.hpp)
// with --durability sync, under concurrent memcached-style commands.
//
// Root: {heap offset, image anchor}, then a buddy heap holding the program image's block
// (image 192 KiB, thread logs of 32 KiB, no interval: only syncs commit). The engine's table
// and items live in the image. Each simulator thread is a server worker: for each operation
// of kv_ops.hpp's mix (set, add, delete or touch into the past, get on 12 keys) it runs
// batch_begin, the operation, batch_end, which syncs when the operation wrote, so an
// operation returns after the epoch holding its writes is durable (the server sends the
// reply then). The image's before_commit hook keeps a copy of the image per epoch.
//
// recover(): the heap's, then the image's (crash/checkpoint/image_history.hpp).
// Checker: the applied epoch is the committed one, c; the persistent image equals, byte for
// byte, the volatile image at the end of epoch c (every write of the engine and of the
// image's allocator was marked; an epoch is all or nothing: the table is as it was between
// two operations); and c is at least the epoch committed when each returned operation
// returned (a write acknowledged in sync mode is durable).
#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/image_history.hpp"
#include "cpnvm_engine.hpp"
#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/containers/program_image.hpp"
#include "ferrite/pmem/primitives.hpp"
#include "kv_ops.hpp"
#include "kv_targets.hpp"

namespace ferrite::crash::kv_targets {
namespace {

using alloc::buddy_heap;
using checkpoint_targets::image_history;

constexpr std::uint64_t heap_bytes = 1 << 20;  // the image block (image and logs) and the heap's own

struct root_line {
  std::uint64_t heap_offset;
  std::uint64_t image_anchor;
};

root_line* root_of(pmem::pool& p) { return static_cast<root_line*>(p.root_bytes(64 + heap_bytes)); }

class kv_cpnvm_workload final : public sim::workload {
 public:
  kv_cpnvm_workload(pmem::pool& p, const sim::run_config& c)
      : config_(c), progress_(c.threads), returned_epoch_(c.threads, std::vector<std::uint64_t>(c.ops_per_thread)) {
    root_ = root_of(p);
    root_->heap_offset = static_cast<std::uint64_t>(reinterpret_cast<std::byte*>(root_) - p.base()) + 64;
    heap_.reset(new buddy_heap(buddy_heap::create(p, root_->heap_offset, heap_bytes)));  // not movable: built in place
    image_options o;
    o.image_bytes = 192 << 10;
    o.max_threads = c.threads + 1;
    o.log_bytes = 32 << 10;
    o.interval = std::chrono::hours(1);
    o.before_commit = [this](std::uint64_t epoch) { history_.keep(epoch, image_->whole_image()); };
    image_ = std::make_shared<program_image>(program_image::create(p, *heap_, root_->image_anchor, o));
    pmem::pwb(root_);
    pmem::pfence();
    kv::cpnvm_engine_options eo;
    eo.max_item_bytes = 1024;
    eo.evict = false;
    eo.mode = kv::durability::sync;
    eo.worker_threads = c.threads;
    eo.log_bytes = o.log_bytes;
    engine_ = std::make_unique<kv::cpnvm_engine>(image_, eo);  // creates the table: an epoch of its own
  }
  ~kv_cpnvm_workload() override { engine_.reset(); }

  void run_thread(unsigned tid) override {
    engine_->worker_started({});
    for (std::uint64_t i = 0; i < config_.ops_per_thread; ++i) {
      progress_.begin(tid);
      engine_->batch_begin();
      std::uint64_t cas = 0;
      (void)run_kv_op(*engine_, kv_op_of(config_, tid, i), cas);
      engine_->batch_end();
      returned_epoch_[tid][i] = image_->committed_epoch();
      progress_.end(tid);
    }
    engine_->worker_stopping();
  }

  const sim::op_progress& progress() const noexcept override { return progress_; }

  void recover(pmem::pool& image) const override {
    const root_line* root = root_of(image);
    checkpoint_targets::recover_image_pool(image, root->heap_offset, root->image_anchor);
  }

  std::string verify(pmem::pool& image, const sim::progress_snapshot& at_crash) const override {
    const root_line* root = root_of(image);
    return checkpoint_targets::check_recovered_log(
        image, root->heap_offset, root->image_anchor,
        [&](const checkpoint::epoch_log& log, std::uint64_t c) { return check(log, c, at_crash); });
  }

 private:
  std::string check(const checkpoint::epoch_log& log, std::uint64_t c, const sim::progress_snapshot& at_crash) const {
    for (unsigned tid = 0; tid < config_.threads; ++tid) {
      for (std::uint64_t i = 0; i < at_crash[tid].completed && i < config_.ops_per_thread; ++i) {
        if (returned_epoch_[tid][i] > c)
          return "thread " + std::to_string(tid) + "'s operation " + std::to_string(i) + " returned after epoch " +
                 std::to_string(returned_epoch_[tid][i]) + " committed, but the pool holds epoch " + std::to_string(c);
      }
    }
    return history_.compare(log, c);
  }

  sim::run_config config_;
  sim::op_progress progress_;
  std::vector<std::vector<std::uint64_t>> returned_epoch_;  // committed epoch when each operation returned
  root_line* root_ = nullptr;
  std::unique_ptr<buddy_heap> heap_;
  std::shared_ptr<program_image> image_;
  std::unique_ptr<kv::cpnvm_engine> engine_;
  image_history history_;
};

}  // namespace

void register_kv_cpnvm_target(sim::target_registry& r) {
  r.add(std::make_unique<sim::simple_target>(
      sim::simple_target(
          "kv-cpnvm",
          "ferrite-kv's cpnvm engine, --durability sync: set/add/delete/get on 12 keys; the persistent image equals "
          "the volatile image at the end of a committed epoch that holds every returned operation",
          [](pmem::pool& p, const sim::run_config& c) { return std::make_unique<kv_cpnvm_workload>(p, c); },
          [](const sim::run_config&) { return std::uint64_t{64 + heap_bytes + (64 << 10)}; })
          .with_mutation_scope({"src/checkpoint/"})));
}

}  // namespace ferrite::crash::kv_targets
