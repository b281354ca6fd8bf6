// bench/index/index_subjects.cpp: the ordered index of issue 21 as a keyed `ferrite bench`
// subject, 8-byte keys and values:
//
//   tree-volatile  ferrite::index::tree (index/tree.hpp): the Masstree-style B+-tree, leaves
//                  of width 14 with permutation words, optimistic lock-free readers, a lock
//                  per node for writers; in DRAM, nothing persisted. The tree InCLL makes
//                  durable (tree-incll), measured without it: tree-incll over
//                  tree-volatile is what InCLL costs. Not issue 19's `volatile-tree` (one
//                  reader-writer lock over a plain B+-tree).
//   tree-incll     ferrite::index::durable_tree (index/durable_tree.hpp): the same tree with its
//                  nodes in a scratch pool (root region sized from capacity_hint), InCLL's
//                  undo words and external log, 64 ms epochs ended by the tree's ticker.
//   tree-undo      the same durable tree with incll_options::external_only: the thesis's
//                  external-logging-only variant ([NVM] ch. 3), every node's first change in
//                  an epoch logs the whole node (6 lines written back, one pfence) before
//                  the change; the same epochs and boundary. Its logs hold one entry per 32
//                  arena nodes, 64 to 16,384 per shard (16,384 at --keys 1000000 and more: a
//                  full log ends the epoch early, which would charge it extra boundaries),
//                  tree-incll's the default 64 (only splits and conflicts use them).
//
//   tree-volatile-k16, tree-incll-k16
//                  the same two trees instantiated for 16-byte keys (index::key128, nodes of
//                  seven lines instead of five): the workload's key a is key128{P, a} for one
//                  constant high word P, so every key shares its first 8 bytes (as string
//                  keys with a common prefix do) and every comparison reads both words; the
//                  map is monotone, so scans return the same keys in the same order as the
//                  8-byte subjects, and the key stream is the same.
//
// The tree is filled with prefill_key(i) -> i for i < initial_size, in increasing key order,
// before any worker attaches (appends to the rightmost leaf leave full leaves, tree_split.cpp).
#include "bench/index/index_subjects.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "ferrite/index/durable_tree.hpp"
#include "ferrite/index/tree.hpp"
#include "ferrite/pmem/pool.hpp"

namespace ferrite::bench {
namespace {

// The workload's 8-byte key as the tree's key (above), and back.
constexpr std::uint64_t k16_prefix = 0x6b65792d31363a00ull;  // "key-16:\0", one high word for all
template <class W>
W key_of(std::uint64_t a) noexcept {
    if constexpr (sizeof(W) == 8) return a;
    else return index::key128{k16_prefix, a};
}
inline std::uint64_t word_of(std::uint64_t k) noexcept { return k; }
inline std::uint64_t word_of(const index::key128& k) noexcept { return k.lo; }

template <class W>
struct volatile_holder {
    using key = W;
    explicit volatile_holder(const subject_config&) {}
    index::basic_tree<W>& get() noexcept { return tree; }
    const index::basic_tree<W>& get() const noexcept { return tree; }
    index::basic_tree<W> tree;
};

// A scratch pool (removed at the end) whose root region holds the durable tree.
// External_only: tree-undo's engine (the thesis's external-logging-only variant).
template <bool ExternalOnly, class W = std::uint64_t>
class incll_holder {
    using durable_tree = index::basic_durable_tree<W>;

public:
    using key = W;
    explicit incll_holder(const subject_config& c)
        : path_((c.pool_dir.empty() ? std::filesystem::path("/dev/shm") : c.pool_dir) /
                ((ExternalOnly ? "ferrite-bench-undo-" : "ferrite-bench-incll-") + std::to_string(::getpid()) + "-" + std::to_string(counter()++))),
          options_(options(nodes_for(c))),
          bytes_(durable_tree::region_bytes(nodes_for(c), options_)),
          pool_(pmem::pool::create(path_, "ferrite-bench-incll", bytes_ + (4 << 20))) {
        tree_ = durable_tree::create(static_cast<std::byte*>(pool_.root_bytes(bytes_)), bytes_, options_);
    }
    ~incll_holder() {
        tree_.reset();
        pool_.close();
        std::error_code ec;
        std::filesystem::remove(path_, ec);
    }
    incll_holder(const incll_holder&) = delete;
    incll_holder& operator=(const incll_holder&) = delete;
    durable_tree& get() noexcept { return *tree_; }
    const durable_tree& get() const noexcept { return *tree_; }

private:
    // tree-undo's logs: one entry per 32 arena nodes, 64 to 16,384 per shard (small trees, as
    // the harness tests', get small logs).
    static index::incll_options options(std::uint64_t nodes) {
        index::incll_options o;
        if (ExternalOnly) {
            o.external_only = true;
            o.log_entries = static_cast<unsigned>(std::clamp<std::uint64_t>(nodes / 32, 64, 16384));
        }
        return o;
    }
    // A leaf holds 8 to 14 keys after splits (14 after the ascending prefill): one node per 6
    // keys, plus interior nodes and each shard's reserve.
    static std::uint64_t nodes_for(const subject_config& c) {
        const std::uint64_t keys = c.capacity_hint ? c.capacity_hint : 2 * c.initial_size + (std::uint64_t{1} << 20);
        return keys / 6 + keys / 60 + 4096;
    }
    static std::atomic<unsigned>& counter() {
        static std::atomic<unsigned> n{0};
        return n;
    }
    std::filesystem::path path_;
    index::incll_options options_;
    std::uint64_t bytes_;
    pmem::pool pool_;
    std::unique_ptr<durable_tree> tree_;
};

template <class Holder>
class tree_subject final : public subject {
    using W = typename Holder::key;
    static W k(std::uint64_t a) noexcept { return key_of<W>(a); }

public:
    explicit tree_subject(const subject_config& c) : holder_(c), sinks_(c.threads) {
        auto& tree_ = holder_.get();
        for (std::uint64_t i = 0; i < c.initial_size; ++i) tree_.insert(k(prefill_key(i)), i);
    }
    void run(unsigned tid, op o, std::uint64_t a, std::uint64_t b) override {
        auto& tree_ = holder_.get();
        sink& out = sinks_[tid];
        switch (o) {
        case op::contains: out.v += tree_.get(k(a)).has_value(); break;
        case op::get:
            if (const auto v = tree_.get(k(a))) out.v += *v;
            break;
        case op::scan: tree_.scan(k(a), b, [&](const W&, std::uint64_t v) { out.v += v; }); break;
        case op::insert: tree_.insert(k(a), b); break;
        case op::put: tree_.insert_or_assign(k(a), b); break;
        case op::erase: tree_.erase(k(a)); break;
        default: break;  // not offered: the kind lists what it supports
        }
    }
    bool visit(const std::function<void(std::uint64_t, std::uint64_t)>& f) const override {
        holder_.get().scan(W{}, std::numeric_limits<std::size_t>::max(), [&](const W& key, std::uint64_t v) { f(word_of(key), v); });
        return true;
    }
    std::optional<std::uint64_t> read_checksum(unsigned tid) const override { return sinks_[tid].v; }

private:
    Holder holder_;
    std::vector<sink> sinks_;
};

}  // namespace

namespace {

// One tree subject: every keyed operation the trees offer, over Holder's tree.
template <class Holder>
subject_kind tree_kind(std::string name, std::string summary) {
    return {std::move(name),
            std::move(summary),
            {op::insert, op::erase, op::contains, op::get, op::put, op::scan},
            [](const subject_config& c) { return std::make_unique<tree_subject<Holder>>(c); },
            op_family::keyed};
}

}  // namespace

void register_index_subjects(std::vector<subject_kind>& out) {
    out.push_back(tree_kind<volatile_holder<std::uint64_t>>(
        "tree-volatile",
        "Masstree-style B+-tree (index/): width-14 permutation leaves, lock-free optimistic readers, "
        "a lock per node (issue 21's volatile baseline)"));
    out.push_back(tree_kind<incll_holder<false>>(
        "tree-incll",
        "the same tree made durable by InCLL (index/durable_tree.hpp): in-line undo words, external "
        "per-shard log, 64 ms user-space epochs, nodes in a scratch pool (issue 21)"));
    out.push_back(tree_kind<incll_holder<true>>(
        "tree-undo",
        "the same durable tree with external undo logging only (the thesis's variant without in-line "
        "words): each node's first change per 64 ms epoch logs the node (pwb, pfence) first (issue 21)"));
    out.push_back(tree_kind<volatile_holder<index::key128>>(
        "tree-volatile-k16",
        "tree-volatile with 16-byte keys (index::key128; key a is {one shared high word, a}): seven-line "
        "nodes, two-word comparisons (issue 21)"));
    out.push_back(tree_kind<incll_holder<false, index::key128>>(
        "tree-incll-k16",
        "tree-incll with 16-byte keys (index::key128; key a is {one shared high word, a}): the same InCLL "
        "engine over seven-line nodes (issue 21)"));
}

}  // namespace ferrite::bench
