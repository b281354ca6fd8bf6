// bench/baselines/logfree_subjects.cpp: `logfree-list` and `logfree-hash` (set_baselines.hpp)
// on logfree::logfree_set with the link cache on, as in the paper's evaluation.
//
// Sizing: the list is one bucket; the hash has bit_ceil(max(--keys, 1024)) buckets, so about
// one key per bucket while the set-mix workload keeps about --keys keys present (load factor
// 1). The first pool segment holds the prefill and as many inserted nodes again; the arena
// adds segments if a long run needs more (nodes are not reclaimed, see logfree_set.hpp).
#include <algorithm>
#include <bit>
#include <memory>

#include "bench/baselines/logfree_set.hpp"
#include "bench/baselines/set_baselines.hpp"

namespace ferrite::bench {
namespace {

class logfree_subject final : public subject {
public:
    logfree_subject(const subject_config& c, bool hash)
        : set_(options_for(c, hash)), sinks_(std::max(c.threads, 1u)) {
        set_.prefill(c.initial_size);
    }

    void run(unsigned tid, op o, std::uint64_t a, std::uint64_t b) override {
        switch (o) {
            case op::insert: (void)set_.insert(tid, a, b); break;
            case op::erase: (void)set_.erase(a); break;
            case op::contains: sinks_[tid].v += set_.contains(a); break;
            case op::get:
                if (const auto v = set_.get(a)) sinks_[tid].v += *v;
                break;
            default: break;  // not offered: the kind lists what it supports
        }
    }

private:
    static logfree::logfree_set::options options_for(const subject_config& c, bool hash) {
        logfree::logfree_set::options o;
        o.buckets = hash ? std::bit_ceil(std::max<std::uint64_t>(c.initial_size, 1024)) : 1;
        o.use_link_cache = true;
        o.threads = std::max(c.threads, 1u);
        o.expected_nodes = 2 * c.initial_size;
        o.pool_dir = c.pool_dir;
        return o;
    }

    logfree::logfree_set set_;
    std::vector<sink> sinks_;
};

}  // namespace

subject_kind logfree_list_kind() {
    return {"logfree-list",
            "log-free durable sorted list (David et al. 2018): link-and-persist + link cache (set baseline)",
            {op::insert, op::erase, op::contains, op::get},
            [](const subject_config& c) { return std::make_unique<logfree_subject>(c, false); },
            op_family::keyed};
}

subject_kind logfree_hash_kind() {
    return {"logfree-hash",
            "log-free durable hash set (David et al. 2018): fixed buckets from --keys, log-free lists",
            {op::insert, op::erase, op::contains, op::get},
            [](const subject_config& c) { return std::make_unique<logfree_subject>(c, true); },
            op_family::keyed};
}

void register_set_baselines(std::vector<subject_kind>& out) {
    out.push_back(logfree_list_kind());
    out.push_back(logfree_hash_kind());
    out.push_back(pmdk_hash_kind());
}

}  // namespace ferrite::bench
