// bench/index/index_subjects.cpp: the ordered index of issue 21 as a keyed `ferrite bench`
// subject, 8-byte keys and values:
//
//   tree-volatile  ferrite::index::tree (index/tree.hpp): the Masstree-style B+-tree, leaves
//                  of width 14 with permutation words, optimistic lock-free readers, a lock
//                  per node for writers; in DRAM, nothing persisted. The tree InCLL makes
//                  durable (tree-incll, to come), measured without it: tree-incll over
//                  tree-volatile is what InCLL costs. Not issue 19's `volatile-tree` (one
//                  reader-writer lock over a plain B+-tree).
//
// The tree is filled with prefill_key(i) -> i for i < initial_size, in increasing key order,
// before any worker attaches (appends to the rightmost leaf leave full leaves, tree_split.cpp).
#include "bench/index/index_subjects.hpp"

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>

#include "ferrite/index/tree.hpp"

namespace ferrite::bench {
namespace {

class tree_volatile final : public subject {
public:
    explicit tree_volatile(const subject_config& c) : sinks_(c.threads) {
        for (std::uint64_t i = 0; i < c.initial_size; ++i) tree_.insert(prefill_key(i), i);
    }
    void run(unsigned tid, op o, std::uint64_t a, std::uint64_t b) override {
        sink& out = sinks_[tid];
        switch (o) {
        case op::contains: out.v += tree_.get(a).has_value(); break;
        case op::get:
            if (const auto v = tree_.get(a)) out.v += *v;
            break;
        case op::scan: tree_.scan(a, b, [&](std::uint64_t, std::uint64_t v) { out.v += v; }); break;
        case op::insert: tree_.insert(a, b); break;
        case op::put: tree_.insert_or_assign(a, b); break;
        case op::erase: tree_.erase(a); break;
        default: break;  // not offered: the kind lists what it supports
        }
    }
    bool visit(const std::function<void(std::uint64_t, std::uint64_t)>& f) const override {
        tree_.scan(0, std::numeric_limits<std::size_t>::max(), f);
        return true;
    }
    std::optional<std::uint64_t> read_checksum(unsigned tid) const override { return sinks_[tid].v; }

private:
    index::tree tree_;
    std::vector<sink> sinks_;
};

}  // namespace

void register_index_subjects(std::vector<subject_kind>& out) {
    out.push_back({"tree-volatile",
                   "Masstree-style B+-tree (index/): width-14 permutation leaves, lock-free optimistic readers, "
                   "a lock per node (issue 21's volatile baseline)",
                   {op::insert, op::erase, op::contains, op::get, op::put, op::scan},
                   [](const subject_config& c) { return std::make_unique<tree_volatile>(c); },
                   op_family::keyed});
}

}  // namespace ferrite::bench
