// bench/trees/tree_subjects.cpp: the B+-tree of issue 19 as a keyed `ferrite bench` subject,
// 8-byte keys and values:
//
//   volatile-tree  bench::btree<uint64_t, uint64_t> (btree.hpp: fanout 32, leaves linked,
//                  one writer-preferring reader-writer lock, sync::rw_spin_lock: contains,
//                  get and scan shared, insert, erase and put exclusive), in DRAM, nothing persisted (pwb/op and pfence/op are 0,
//                  counted). The program CpNvm will checkpoint, measured without it: the
//                  CpNvm tree over volatile-tree is what checkpointing costs, and
//                  volatile-tree over ordered-map-mutex is what the tree itself costs.
//
//   cpnvm-tree     the same tree ported to CpNvm (cpnvm_btree.hpp): nodes and the tree object
//                  in a ferrite::program_image (containers/program_image.hpp) in a scratch
//                  pool, every node write marked, checkpoint() after every operation (an
//                  epoch commits every 64 ms if anything was marked, or sooner when a
//                  thread's marks fill half its log). cpnvm-tree-10ms and cpnvm-tree-1ms: the interval sweep of issue 19.
//                  pwb/op and pfence/op are the checkpoints' (record write-backs, commit,
//                  replay) spread over the operations. cpnvm-tree-lazy: cpnvm-tree whose
//                  reopen loads the image on first touch instead of all at once.
//                  These replay each epoch in line (checkpoint/replay_mode.hpp);
//                  cpnvm-tree-inline and cpnvm-tree-background name the two modes, for the
//                  ablation. Background replay's write-backs run on the image's replayer
//                  thread, whose counters the harness does not read: its pwb/op counts only
//                  the workers' (records and commit), not the replay's.
//                  The CpNvm trees reopen (set-recovery, tree-recovery): close_for_reopen()
//                  syncs (a clean close), drops the image and restarts the pool as after a
//                  crash (the heap's recovery, the image's replay of what committed and was
//                  not applied: nothing after a sync), untimed; reopen(threads) opens the image (eager load
//                  with `threads` threads, or armed for lazy loading) and finds the tree at
//                  its root; lookup_after_reopen() is a get from an unregistered thread (reads
//                  neither mark nor checkpoint).
//
// The tree is filled with prefill_key(i) -> i for i < initial_size, in increasing key order,
// before any worker attaches (so its leaves start about half full, as sequential inserts
// leave a B+-tree).
#include "bench/trees/tree_subjects.hpp"

#include <bit>
#include <chrono>
#include <optional>

#include "bench/sets/set_pool.hpp"
#include "bench/trees/btree.hpp"
#include "bench/trees/cpnvm_btree.hpp"
#include "ferrite/checkpoint/image_store.hpp"
#include "ferrite/error.hpp"

namespace ferrite::bench {
namespace {

// One keyed operation on a tree (btree or cpnvm_btree), reads summed into `sink`.
template <class Tree>
void run_on(Tree& tree, op o, std::uint64_t a, std::uint64_t b, sink& out) {
    switch (o) {
    case op::contains: out.v += tree.contains(a); break;
    case op::get:
        if (const auto v = tree.get(a)) out.v += *v;
        break;
    case op::scan:
        tree.scan(a, b, [&](std::uint64_t, std::uint64_t v) { out.v += v; });
        break;
    case op::insert: tree.insert(a, b); break;
    case op::erase: tree.erase(a); break;
    case op::put: tree.put(a, b); break;
    default: break;  // not offered: the kind lists what it supports
    }
}

class volatile_tree final : public subject {
public:
    explicit volatile_tree(const subject_config& c) : sinks_(c.threads) {
        for (std::uint64_t i = 0; i < c.initial_size; ++i) tree_.insert(prefill_key(i), i);
    }
    void run(unsigned tid, op o, std::uint64_t a, std::uint64_t b) override { run_on(tree_, o, a, b, sinks_[tid]); }
    bool visit(const std::function<void(std::uint64_t, std::uint64_t)>& f) const override {
        tree_.scan(0, ~std::size_t{0}, f);
        return true;
    }
    std::optional<std::uint64_t> read_checksum(unsigned tid) const override { return sinks_[tid].v; }

private:
    btree<std::uint64_t, std::uint64_t> tree_;
    std::vector<sink> sinks_;
};

// CpNvm's image for `keys` keys at most: nodes take about 40 bytes per key (a 576-byte leaf
// of 16-32 keys, inner nodes), 200 for a margin, at least 4 MiB; a log per thread of a
// quarter of the image, at most 16 MiB (a thread whose marks fill half of it checkpoints).
// The pool file is allocated up front: small measurements keep small pools.
// The replay mode of cpnvm-tree and its interval and lazy variants: in line, which was faster
// than background replay on this 2-vCPU VM (docs/checkpointing.md, "Background replay";
// cpnvm-tree-background and cpnvm-tree-inline name both for the ablation).
constexpr checkpoint::replay_mode cpnvm_default_replay = checkpoint::replay_mode::in_line;

image_options cpnvm_options(const subject_config& c, std::chrono::milliseconds interval, checkpoint::replay_mode replay) {
    const std::uint64_t keys = c.capacity_hint ? c.capacity_hint : 2 * c.initial_size + (1 << 16);
    image_options o;
    o.image_bytes = std::max<std::uint64_t>(std::uint64_t{4} << 20, std::bit_ceil(keys * 200));
    o.max_threads = c.threads + 1;  // the workers and the prefilling thread
    o.log_bytes = std::min<std::uint64_t>(std::uint64_t{16} << 20, o.image_bytes / 4);
    o.interval = interval;
    o.replay = replay;
    return o;
}
// A restart's recovery of the image (what the catalog does for kind 10): the replay of what
// committed and was not applied, validating every record first; the block's confirmation.
void program_image_recover(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t anchor) {
    auto store = checkpoint::image_store::open(pool, heap, anchor);
    store.log().recover();
    checkpoint::image_store::confirm(pool, heap, anchor);
}

std::uint64_t cpnvm_heap_bytes(const image_options& o) {
    const std::uint64_t block = std::bit_ceil(o.image_bytes + o.max_threads * o.log_bytes + (1 << 20));
    return 2 * block;  // the buddy heap's largest block is below its arena size
}

class cpnvm_tree final : public subject {
    using tree_type = cpnvm_btree<std::uint64_t, std::uint64_t>;

public:
    cpnvm_tree(const subject_config& c, std::chrono::milliseconds interval, bool lazy, checkpoint::replay_mode replay)
        : options_(cpnvm_options(c, interval, replay)), pool_(c.pool_dir, cpnvm_heap_bytes(options_)), sinks_(c.threads),
          scopes_(c.threads), quiet_(c.threads) {
        if (tree_type::image != nullptr) throw usage_error("cpnvm-tree: one CpNvm tree at a time in a process");
        options_.lazy = lazy;  // applies to reopen() only: create maps a fresh image
        image_.emplace(program_image::create(pool_.pool(), pool_.heap(), pool_.anchor(), options_));
        tree_type::image = &*image_;
        auto me = image_->register_thread();
        tree_ = new (image_->allocate(sizeof(tree_type))) tree_type();
        image_->set_root("tree", tree_);
        for (std::uint64_t i = 0; i < c.initial_size; ++i) {
            tree_->insert(prefill_key(i), i);
            image_->checkpoint();
        }
        image_->sync();
    }
    ~cpnvm_tree() override { tree_type::image = nullptr; }  // the tree's memory is the image's
    void attach(unsigned tid) override { scopes_[tid].emplace(image_->register_thread()); }
    void detach(unsigned tid) override { scopes_[tid].reset(); }
    void pause(unsigned tid) override { quiet_[tid].emplace(image_->quiesce()); }
    void resume(unsigned tid) override { quiet_[tid].reset(); }
    void run(unsigned tid, op o, std::uint64_t a, std::uint64_t b) override {
        run_on(*tree_, o, a, b, sinks_[tid]);
        image_->checkpoint();  // a consistent point: the operation is over, no lock held
    }
    void close_for_reopen() override {
        {  // a clean close: what the threads did since the last checkpoint is committed first
            auto me = image_->register_thread();
            image_->sync();
        }
        tree_ = nullptr;
        tree_type::image = nullptr;
        image_.reset();  // unmaps the volatile image; the pool holds what the last sync() committed
        pool_.restart([](const pmem::pool_ref& p, alloc::buddy_heap& h, std::uint64_t anchor) {
            program_image_recover(p, h, anchor);
        });
    }
    std::uint64_t reopen(unsigned load_threads) override {
        image_options o = options_;
        o.load_threads = load_threads;
        image_.emplace(program_image::open(pool_.pool(), pool_.heap(), pool_.anchor(), o));
        tree_type::image = &*image_;
        tree_ = static_cast<tree_type*>(image_->root("tree"));
        if (tree_ == nullptr) throw error("cpnvm-tree: the reopened image has no root 'tree'");
        tree_->after_restart();  // a new lock: the image's bytes of the old one are not state
        return tree_->size();
    }
    std::optional<std::uint64_t> lookup_after_reopen(std::uint64_t key) override { return tree_->get(key); }
    bool visit(const std::function<void(std::uint64_t, std::uint64_t)>& f) const override {
        tree_->scan(0, ~std::size_t{0}, f);
        return true;
    }
    std::optional<std::uint64_t> read_checksum(unsigned tid) const override { return sinks_[tid].v; }

private:
    image_options options_;
    set_pool pool_;
    std::optional<program_image> image_;
    tree_type* tree_ = nullptr;
    std::vector<sink> sinks_;
    std::vector<std::optional<program_image::thread_scope>> scopes_;
    std::vector<std::optional<program_image::quiescent_scope>> quiet_;
};

}  // namespace

void register_tree_subjects(std::vector<subject_kind>& out) {
    out.push_back({"volatile-tree",
                   "volatile B+-tree, fanout 32, under one writer-preferring rw lock, reads shared (issue 19's plain tree)",
                   {op::insert, op::erase, op::contains, op::get, op::put, op::scan},
                   [](const subject_config& c) { return std::make_unique<volatile_tree>(c); },
                   op_family::keyed});
    using checkpoint::replay_mode;
    const auto add_cpnvm = [&](const char* name, const char* summary, std::chrono::milliseconds interval, bool lazy,
                               replay_mode replay = cpnvm_default_replay) {
        out.push_back({name, summary, {op::insert, op::erase, op::contains, op::get, op::put, op::scan},
                       [interval, lazy, replay](const subject_config& c) {
                           return std::make_unique<cpnvm_tree>(c, interval, lazy, replay);
                       },
                       op_family::keyed, true});
    };
    using namespace std::chrono_literals;
    add_cpnvm("cpnvm-tree",
              "the plain B+-tree ported to CpNvm: marked writes, checkpoint every 64 ms, reopened eagerly (issue 19)",
              64ms, false);
    // The replay ablation (docs/checkpointing.md): cpnvm-tree with each replay mode named.
    add_cpnvm("cpnvm-tree-inline", "cpnvm-tree replaying each epoch in line, in the checkpoint's last thread", 64ms,
              false, replay_mode::in_line);
    add_cpnvm("cpnvm-tree-background", "cpnvm-tree replaying each epoch from the logs in a background thread", 64ms,
              false, replay_mode::background);
    add_cpnvm("cpnvm-tree-10ms", "cpnvm-tree checkpointing every 10 ms", 10ms, false);
    add_cpnvm("cpnvm-tree-1ms", "cpnvm-tree checkpointing every 1 ms", 1ms, false);
    add_cpnvm("cpnvm-tree-lazy", "cpnvm-tree reopened lazily: image pages loaded on first touch (tree-recovery)", 64ms,
              true);
}

}  // namespace ferrite::bench
