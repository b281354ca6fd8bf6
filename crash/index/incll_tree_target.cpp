// crash/index/incll_tree_target.cpp: `incll-tree`, the durable tree (index/durable_tree.hpp,
// InCLL) with several writer threads, leaf and interior splits, root growth and epoch ends
// in the middle of them.
//
// Setup (not observed): a region in the pool's root, a tree with 2 writer shards, small
// external logs (a full log ends its epoch: that path runs too) and write-back chunks of 3
// nodes (a writer waiting through an epoch end writes back part of a shard's list), preloaded with 112 keys so
// that the root is an interior node close to full and the run splits it and grows the root.
// Thread t's operation i draws a key from (seed, t, i) in a range shared by all threads (so
// they meet in leaves and splits) and inserts, assigns (half the values too wide for an
// in-line undo word) or erases it; every fifth operation is a sync() instead, which records
// the epoch it made durable. Epochs end only at sync() or a full log (no ticker: the
// interleaving stays a function of the seed).
// The tree's before_commit hook, run at each epoch end while no writer is inside an
// operation, keeps a copy of the tree's contents: the state that epoch commits.
//
// recover(): open (validation, external log rollback, the commit line's bump; the per-leaf
// rollback eager on even seeds, lazy on odd ones), then a second life (below), all observed,
// so a crash during recovery may land in it. Lazily, the second life reaches only the right
// edge of the tree: its sync commits an epoch while most nodes are still unrecovered (pending
// in the commit line), and the close's finish() recovers and writes back the rest; a crash in
// either leaves two epochs to roll back (the verifying open recovers them eagerly).
// Checker (buffered durability): the recovered tree's workload keys equal the copy kept at
// the end of some epoch >= the one every sync() that returned before the crash made durable,
// and the second life's keys are exactly what it wrote. Then the recovered tree must keep
// working: inserts that split, erases, a sync, a clean reopen, all checked against the copy
// continued.
//
// Key width, shared points: seeds with seed % 4 >= 2 run the tree of 16-byte keys (key128)
// instead, so the target's points (and CI time) are shared between the widths rather than a
// campaign added; with the lazy/eager split on seed % 2, every run of four consecutive seeds
// covers 8-byte eager, 8-byte lazy, 16-byte eager and 16-byte lazy. The workload's key k maps
// to key128{k / 64, (k % 64) * (2^57 + 1)}: 64 keys share each high word (a leaf's keys and
// most separators differ only in the low word), keys k and k + 64 differ only in the high
// word, and the map is monotone, so the checker's model stays in workload keys.
//
// `undo-tree`: the same workload and checker over the external-logging-only engine
// (incll_options::external_only, bench subject tree-undo): every change goes through the
// external log, so its pwb/pfence sites (log entry, boundary, commit) are the ones mutated.
#include <algorithm>
#include <atomic>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "index_targets.hpp"
#include "ferrite/index/durable_tree.hpp"
#include "ferrite/sim/rng.hpp"

namespace ferrite::crash::index_targets {
namespace {

using contents_map = std::map<std::uint64_t, std::uint64_t>;

constexpr std::uint64_t key_range = 192;
constexpr std::uint64_t arena_nodes = 160;
constexpr std::uint64_t preload = 112;

index::incll_options tree_options(bool external_only) {
    index::incll_options o;
    o.epoch_length = std::chrono::milliseconds(0);
    o.shards = 2;
    o.log_entries = 24;
    o.write_back_chunk = 3;  // several chunks per shard: a waiting writer shares a busy shard
    o.external_only = external_only;
    return o;
}
template <class W>
std::uint64_t region_bytes() {
    return index::basic_durable_tree<W>::region_bytes(arena_nodes, tree_options(false));
}
bool wide_keys(const sim::run_config& c) { return c.seed % 4 >= 2; }

// Workload keys <-> the tree's keys (above); monotone both ways.
constexpr std::uint64_t low_step = (std::uint64_t{1} << 57) + 1;
template <class W>
W to_key(std::uint64_t k) noexcept {
    if constexpr (sizeof(W) == 8) return k;
    else return index::key128{k / 64, (k % 64) * low_step};
}
std::uint64_t from_key(std::uint64_t k) noexcept { return k; }
std::uint64_t from_key(const index::key128& k) noexcept { return k.hi * 64 + k.lo / low_step; }

template <class W>
contents_map contents_of(const index::basic_durable_tree<W>& t) {
    contents_map m;
    t.scan(W{}, std::numeric_limits<std::size_t>::max(), [&](const W& k, std::uint64_t v) { m.emplace(from_key(k), v); });
    return m;
}

std::string show(const contents_map& m) {
    std::string s = std::to_string(m.size()) + " keys {";
    std::size_t n = 0;
    for (const auto& [k, v] : m) {
        if (n++ == 12) {
            s.append(" ...");
            break;
        }
        s.append(" ").append(std::to_string(k)).append(":").append(std::to_string(v));
    }
    return s.append(" }");
}

// The first difference between two contents, for the violation's line.
std::string first_difference(const contents_map& got, const contents_map& want) {
    for (const auto& [k, v] : want) {
        auto it = got.find(k);
        if (it == got.end()) return "key " + std::to_string(k) + " missing";
        if (it->second != v) return "key " + std::to_string(k) + " holds " + std::to_string(it->second) + ", not " + std::to_string(v);
    }
    for (const auto& [k, v] : got)
        if (!want.contains(k)) return "key " + std::to_string(k) + " (" + std::to_string(v) + ") invented";
    return "";
}

template <class W>
class tree_workload final : public sim::workload {
    using durable_tree = index::basic_durable_tree<W>;
    static std::uint64_t region_bytes() { return index_targets::region_bytes<W>(); }
    static W key(std::uint64_t k) noexcept { return to_key<W>(k); }

public:
    tree_workload(pmem::pool& p, const sim::run_config& c, bool external_only)
        : config_(c), external_only_(external_only), progress_(c.threads), synced_(c.threads * c.ops_per_thread) {
        region_ = static_cast<std::byte*>(p.root_bytes(region_bytes()));
        auto o = tree_options(external_only_);
        o.before_commit = [this](std::uint64_t epoch) {
            auto m = contents_of(*tree_);
            std::lock_guard g(mutex_);
            history_[epoch] = std::move(m);
        };
        tree_ = durable_tree::create(region_, region_bytes(), o);
        for (std::uint64_t i = 0; i < preload; ++i) tree_->insert(key(i * key_range / preload), i);
        tree_->sync();
    }

    void run_thread(unsigned tid) override {
        for (std::uint64_t i = 0; i < config_.ops_per_thread; ++i) {
            const std::uint64_t r = sim::mix(config_.seed, tid * 1000003 + i);
            const std::uint64_t k = r % key_range;
            const std::uint64_t value = (r >> 40) & 1 ? r : (r >> 48);  // wide or narrow
            progress_.begin(tid);
            if (i % 5 == 4) {
                synced_[tid * config_.ops_per_thread + i].store(tree_->sync(), std::memory_order_release);
            } else {
                switch ((r >> 32) % 4) {
                    case 0: tree_->erase(key(k)); break;
                    case 1: tree_->insert(key(k), value); break;
                    default: tree_->insert_or_assign(key(k), value); break;
                }
            }
            progress_.end(tid);
        }
    }

    const sim::op_progress& progress() const noexcept override { return progress_; }

    // Recovery, then a second life under observation too: keys above the workload's range
    // (new leaves, splits of the last leaf and its parent, an update) and a sync. A crash
    // during recovery may land in the second life, so what recovery leaves for the run after
    // it (the commit line it bumps, the rollback it fences) is crash-tested as well. Run
    // again on its own result, it converges: the second life's writes are idempotent.
    void recover(pmem::pool& image) const override {
        auto o = tree_options(external_only_);
        o.lazy_recovery = config_.seed % 2 == 1;  // odd seeds lazy, even eager: both crash-tested
        auto* region = static_cast<std::byte*>(image.root_bytes(region_bytes()));
        auto t = durable_tree::open(region, region_bytes(), o);
        for (const auto& [k, v] : second_life()) t->insert_or_assign(key(k), v + 1);
        t->sync();  // lazily: an epoch commits while most nodes are still unrecovered
        for (const auto& [k, v] : second_life()) t->insert_or_assign(key(k), v);
        t.reset();  // a clean close: finish() (lazy recovery's write-backs), then the last commit
        // A third life after the close, so that crash points follow the close's finish():
        // a reopen (lazy again) and a write and sync that leave the contents as they are.
        auto u = durable_tree::open(region, region_bytes(), o);
        const contents_map life = second_life();
        u->insert_or_assign(key(life.begin()->first), life.begin()->second);
        u->sync();
    }
    static contents_map second_life() {
        contents_map m;
        for (std::uint64_t j = 0; j < 24; ++j) m[key_range + 1 + j * 2] = (j % 2) ? j : ~j;  // narrow and wide values
        return m;
    }

    std::string verify(pmem::pool& image, const sim::progress_snapshot& at_crash) const override {
        std::uint64_t at_least = 0;  // the newest epoch a returned sync() made durable
        for (unsigned t = 0; t < config_.threads; ++t)
            for (std::uint64_t i = 4; i < at_crash[t].completed; i += 5)
                at_least = std::max(at_least, synced_[t * config_.ops_per_thread + i].load(std::memory_order_acquire));
        auto* region = static_cast<std::byte*>(image.root_bytes(region_bytes()));
        auto t = durable_tree::open(region, region_bytes(), tree_options(external_only_));
        // The workload's keys must be the contents at the end of an epoch >= at_least (the
        // second life's commits renumber the state epoch, so the epoch is found by content);
        // the second life's keys exactly what it wrote.
        contents_map got = contents_of(*t), high;
        for (auto it = got.lower_bound(key_range); it != got.end();) {
            high.insert(*it);
            it = got.erase(it);
        }
        contents_map want = second_life();
        if (high != want) return "the second life's keys after recovery: " + first_difference(high, want);
        std::uint64_t matched = 0;
        {
            std::lock_guard g(mutex_);
            for (auto it = history_.lower_bound(at_least); it != history_.end() && matched == 0; ++it)
                if (it->second == got) matched = it->first;
            if (matched == 0) {
                auto it = history_.lower_bound(at_least);
                return "recovered tree equals no epoch end >= " + std::to_string(at_least) + " (a returned sync()'s); got " +
                       show(got) + (it == history_.end() ? std::string() : ", first difference from epoch " + std::to_string(it->first) + ": " + first_difference(got, it->second));
            }
            for (const auto& [k, v] : history_.at(matched)) want[k] = v;
        }
        // The recovered tree keeps working: new keys (splits), erases, a sync, a reopen.
        for (std::uint64_t k = 0; k < 40; ++k) {
            const std::uint64_t n = key_range + 1000 + k * 3;
            t->insert_or_assign(key(n), k);
            want[n] = k;
        }
        for (std::uint64_t k = 0; k < key_range; k += 7) {
            t->erase(key(k));
            want.erase(k);
        }
        t->sync();
        t.reset();
        auto u = durable_tree::open(region, region_bytes(), tree_options(external_only_));
        const contents_map again = contents_of(*u);
        if (again != want) return "after recovery, new writes, sync and reopen: " + first_difference(again, want);
        return {};
    }

private:
    sim::run_config config_;
    bool external_only_;
    sim::op_progress progress_;
    std::vector<std::atomic<std::uint64_t>> synced_;  // per (thread, op): the epoch a sync() returned
    mutable std::mutex mutex_;
    std::map<std::uint64_t, contents_map> history_;  // the contents at the end of each epoch
    std::byte* region_ = nullptr;
    std::unique_ptr<durable_tree> tree_;  // last: destroyed (its closing sync runs the hook) first
};

std::unique_ptr<sim::workload> make_workload(pmem::pool& p, const sim::run_config& c, bool external_only) {
    if (wide_keys(c)) return std::make_unique<tree_workload<index::key128>>(p, c, external_only);
    return std::make_unique<tree_workload<std::uint64_t>>(p, c, external_only);
}
// The campaign sizes the pool before it knows a run's seed: room for the wider tree.
std::uint64_t pool_bytes(const sim::run_config&) {
    return region_bytes<index::key128>() + (64 << 10);
}

}  // namespace

void register_incll_tree_target(sim::target_registry& r) {
    r.add(std::make_unique<sim::simple_target>(
        sim::simple_target(
            "incll-tree",
            "the durable Masstree-style tree (InCLL; 8-byte keys, 16-byte keys on seeds 2 and 3 mod 4): writers on shared keys, leaf and interior splits, root growth, "
            "epoch ends by sync() and full logs; recovered contents must equal the end of an epoch >= every returned sync()",
            [](pmem::pool& p, const sim::run_config& c) { return make_workload(p, c, false); }, pool_bytes)
            .with_mutation_scope({"src/index/", "include/ferrite/index/"})));
    r.add(std::make_unique<sim::simple_target>(
        sim::simple_target(
            "undo-tree",
            "the same tree and checker over external undo logging only (incll_options::external_only, bench "
            "tree-undo): every node's first change per epoch is logged whole first",
            [](pmem::pool& p, const sim::run_config& c) { return make_workload(p, c, true); }, pool_bytes)
            // The engine's run-time sites. Recovery (incll_recovery.cpp) is shared with
            // incll-tree, whose mutation kills all of its sites; here its last pfence (the
            // commit line's) survives: a second life on the recovering thread fences its first
            // log entry before any store, which makes that pwb durable too. It is still needed
            // when another thread writes first, which this checker's one-thread second life
            // cannot show; incll-tree's fence-free in-line words do.
            .with_mutation_scope({"src/index/incll.cpp", "include/ferrite/index/"})));
}

}  // namespace ferrite::crash::index_targets
