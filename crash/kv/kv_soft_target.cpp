// crash/kv/kv_soft_target.cpp: `kv-soft`, ferrite-kv's soft engine (apps/kv/soft_engine.hpp)
// under concurrent memcached-style commands.
//
// The simulator's threads and operations per thread (--threads, --ops) run kv_ops.hpp's mix
// of set, add, delete (or touch into the past) and get on 12 keys.
//
// Pool: the root holds a buddy heap for the catalog and the index (the SOFT map "items"),
// then the engine's area (kv root and item heap). Recovery (restartable; the simulator
// crashes it too): the index heap's and catalog's recovery (catalog::recover_pool), then the
// engine's own (item heap rollback, validation, confirmations, freeing leftovers).
// Checker, after recovering once more: the item heap is consistent and its allocated blocks
// are exactly the indexed items (nothing leaked or pending); every value is well formed; and
// durable linearizability key by key (sets/set_history.hpp: set = insert_or_assign with
// "was absent" as its flag, add = insert, delete = erase, get = get; half the erases are a
// touch with an expiry in the past, which removes the item as far as any reader can tell);
// and a store after recovery gets a CAS id above every one handed out before the crash.
// Not in the mix: flush_all (it acts on every key at once; the session tests cover it).
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/containers/catalog.hpp"
#include "ferrite/sim/rng.hpp"
#include "ferrite/sim/target.hpp"
#include "kv_ops.hpp"
#include "kv_targets.hpp"
#include "sets/set_history.hpp"
#include "soft_engine.hpp"

namespace ferrite::crash::kv_targets {
namespace {

using namespace sets_check;

constexpr std::uint64_t index_heap_bytes = 256 * 1024;
constexpr std::uint64_t area_bytes = 256 * 1024;

std::byte* root_of(pmem::pool& p) { return static_cast<std::byte*>(p.root_bytes(64 + index_heap_bytes + area_bytes)); }
std::uint64_t heap_offset(pmem::pool& p) { return static_cast<std::uint64_t>(root_of(p) - p.base()) + 64; }
std::span<std::byte> area_of(pmem::pool& p) { return {root_of(p) + 64 + index_heap_bytes, area_bytes}; }

kv::soft_engine_options engine_options() {
  kv::soft_engine_options o;
  o.max_item_bytes = 4096;
  o.evict = false;
  o.recovery_threads = 1;
  o.index_area_bytes = 4096;  // small durable areas: a new one costs 64 write-backs, not 1,024
  o.cas_step = 2;             // raise the CAS high-water mark often, so crashes fall between raises
  return o;
}

// Recovered pieces over an image: the index heap, its catalog, the engine.
struct recovered {
  alloc::buddy_heap heap;
  std::unique_ptr<catalog> names;
  std::unique_ptr<kv::soft_engine> engine;

  explicit recovered(pmem::pool& image) : heap(alloc::buddy_heap::open(image, heap_offset(image))) {
    catalog::recover_pool(image, heap);
    names = std::make_unique<catalog>(image, heap);
    engine = std::make_unique<kv::soft_engine>(image, *names, area_of(image), engine_options());
  }
  ~recovered() {
    engine.reset();
    names.reset();
  }
};

struct record {
  response got;
  std::uint64_t invoked = 0, returned_at = 0;
  std::uint64_t cas = 0;  // the CAS id a store handed out
};

class kv_workload final : public sim::workload {
 public:
  kv_workload(pmem::pool& p, const sim::run_config& c)
      : config_(c), progress_(c.threads), records_(c.threads, std::vector<record>(c.ops_per_thread)),
        heap_(alloc::buddy_heap::create(p, heap_offset(p), index_heap_bytes)) {
    names_ = std::make_unique<catalog>(p, heap_);
    engine_ = std::make_unique<kv::soft_engine>(p, *names_, area_of(p), engine_options());
  }
  ~kv_workload() override {
    engine_.reset();
    names_.reset();
  }

  op op_of(unsigned tid, std::uint64_t i) const { return kv_op_of(config_, tid, i); }

  void run_thread(unsigned tid) override {
    for (std::uint64_t i = 0; i < config_.ops_per_thread; ++i) {
      auto& rec = records_[tid][i];
      rec.invoked = clock_.fetch_add(1) + 1;
      progress_.begin(tid);
      rec.got = run_kv_op(*engine_, op_of(tid, i), rec.cas);
      rec.returned_at = clock_.fetch_add(1) + 1;
      progress_.end(tid);
    }
  }

  const sim::op_progress& progress() const noexcept override { return progress_; }

  void recover(pmem::pool& image) const override { recovered again(image); }

  std::string verify(pmem::pool& image, const sim::progress_snapshot& at_crash) const override {
    recovered r(image);
    if (const auto problems = r.engine->check_items(); !problems.empty()) return "item heap: " + problems.front();
    std::map<std::uint64_t, std::uint64_t> contents;
    for (std::uint64_t k = 0; k < keys; ++k) {
      std::string problem;
      r.engine->get(key_of(k), now, std::nullopt, [&](const kv::item_view& item) {
        if (const auto v = number_in(item.value)) contents[k] = *v;
        else {
          problem = "key ";
          problem += key_of(k);
          problem += " holds a value no operation wrote (";
          problem += std::to_string(item.value.size());
          problem += " bytes)";
        }
      });
      if (!problem.empty()) return problem;
    }
    std::vector<event> history;
    for (unsigned tid = 0; tid < config_.threads; ++tid) {
      const auto& pr = at_crash[tid];
      for (std::uint64_t i = 0; i < pr.completed + (pr.pending ? 1 : 0) && i < config_.ops_per_thread; ++i) {
        event e;
        e.what = op_of(tid, i);
        e.returned = i < pr.completed;
        e.got = records_[tid][i].got;
        e.invoked = records_[tid][i].invoked;
        e.returned_at = e.returned ? records_[tid][i].returned_at : never;
        e.tid = tid;
        e.index = i;
        history.push_back(e);
      }
    }
    if (auto problem = check_history(history, contents, keys); !problem.empty()) return problem;
    // CAS ids never repeat: a store after recovery gets one above every id handed out before.
    std::uint64_t highest = 0;
    for (const auto& e : history) {
      if (e.returned) highest = std::max(highest, records_[e.tid][e.index].cas);
    }
    const auto probe = r.engine->store({kv::store_mode::set, "probe", "x", 0, 0, 0}, now);
    if (probe.cas <= highest) {
      return "after recovery a store got CAS id " + std::to_string(probe.cas) + ", not above " +
             std::to_string(highest) + " handed out before the crash";
    }
    return {};
  }

 private:
  sim::run_config config_;
  sim::op_progress progress_;
  std::vector<std::vector<record>> records_;
  std::atomic<std::uint64_t> clock_{0};
  alloc::buddy_heap heap_;
  std::unique_ptr<catalog> names_;
  std::unique_ptr<kv::soft_engine> engine_;
};

}  // namespace

void register_kv_targets(sim::target_registry& r) {
  r.add(std::make_unique<sim::simple_target>(
      sim::simple_target(
          "kv-soft",
          "ferrite-kv's soft engine: set/add/delete/get of out-of-line items (0-300 byte values) on 12 keys; "
          "durable linearizability, no leaked or pending item block",
          [](pmem::pool& p, const sim::run_config& c) { return std::make_unique<kv_workload>(p, c); },
          [](const sim::run_config&) { return std::uint64_t{64 + index_heap_bytes + area_bytes + (64 << 10)}; })
          .with_mutation_scope({"apps/kv/"})));
  register_kv_cpnvm_target(r);
}

}  // namespace ferrite::crash::kv_targets
