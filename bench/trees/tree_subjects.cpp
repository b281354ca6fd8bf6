// bench/trees/tree_subjects.cpp: the B+-tree of issue 19 as a keyed `ferrite bench` subject,
// 8-byte keys and values:
//
//   volatile-tree  bench::btree<uint64_t, uint64_t> (btree.hpp: fanout 32, leaves linked,
//                  one std::shared_mutex: contains, get and scan shared, insert, erase and
//                  put exclusive), in DRAM, nothing persisted (pwb/op and pfence/op are 0,
//                  counted). The program CpNvm will checkpoint, measured without it: the
//                  CpNvm tree over volatile-tree is what checkpointing costs, and
//                  volatile-tree over ordered-map-mutex is what the tree itself costs.
//
// The tree is filled with prefill_key(i) -> i for i < initial_size, in increasing key order,
// before any worker attaches (so its leaves start about half full, as sequential inserts
// leave a B+-tree).
#include "bench/trees/tree_subjects.hpp"

#include "bench/trees/btree.hpp"

namespace ferrite::bench {
namespace {

// What reads return goes to the reading worker's own line (map_baselines.cpp does the same).
struct alignas(64) sink {
    std::uint64_t v = 0;
};

class volatile_tree final : public subject {
public:
    explicit volatile_tree(const subject_config& c) : sinks_(c.threads) {
        for (std::uint64_t i = 0; i < c.initial_size; ++i) tree_.insert(prefill_key(i), i);
    }
    void run(unsigned tid, op o, std::uint64_t a, std::uint64_t b) override {
        switch (o) {
        case op::contains: sinks_[tid].v += tree_.contains(a); break;
        case op::get:
            if (const auto v = tree_.get(a)) sinks_[tid].v += *v;
            break;
        case op::scan:
            tree_.scan(a, b, [&](std::uint64_t, std::uint64_t v) { sinks_[tid].v += v; });
            break;
        case op::insert: tree_.insert(a, b); break;
        case op::erase: tree_.erase(a); break;
        case op::put: tree_.put(a, b); break;
        default: break;  // not offered: the kind lists what it supports
        }
    }
    bool visit(const std::function<void(std::uint64_t, std::uint64_t)>& f) const override {
        tree_.scan(0, ~std::size_t{0}, f);
        return true;
    }
    std::optional<std::uint64_t> read_checksum(unsigned tid) const override { return sinks_[tid].v; }

private:
    btree<std::uint64_t, std::uint64_t> tree_;
    std::vector<sink> sinks_;
};

}  // namespace

void register_tree_subjects(std::vector<subject_kind>& out) {
    out.push_back({"volatile-tree",
                   "volatile B+-tree, fanout 32, under one std::shared_mutex, reads shared (issue 19's plain tree)",
                   {op::insert, op::erase, op::contains, op::get, op::put, op::scan},
                   [](const subject_config& c) { return std::make_unique<volatile_tree>(c); },
                   op_family::keyed});
}

}  // namespace ferrite::bench
