// crash/sets/linkfree_targets.cpp: crash targets linkfree-list and linkfree-hash (the
// link-free durable set, sets/linkfree_table.hpp), and their registration.
//
// Pool: the root holds the set's anchor line, then a buddy heap the node store's areas grow
// into (4 KiB areas: each thread's first insert grows one, so growth is crashed too).
// Workload: 3 threads by default, 200 operations each (enough for the epoch domain to
// reclaim unlinked nodes and for inserts to reuse their slots mid-run: none did at 40), on a
// small key range (16 keys for the list, 24 for the hash; three in four operations on two hot
// keys) so that operations collide: inserts, erases and contains drawn from (seed, tid, i).
// Each operation takes an invocation and a return stamp from one global counter and records
// its response before progress.end(). The hash set starts with one bucket and checks its load
// after every insert, so the directory grows during the run (to 8-16 buckets) and recovery
// rebuilds it at several sizes.
// Recovery: heap.recover(), the set's recover(), heap.finish_recovery(), then open() (the
// O(n) rebuild: validation, normalising dead nodes). The simulator crashes it too.
// Checker (verify), after recovering once more: the heap is consistent and its live blocks
// are exactly the set's (no leak); the recovered members are keys of the range, each once;
// every key's history is durably linearizable (set_history.hpp); then the recovered set
// keeps working: every key toggled (the responses follow the recovered membership), and
// after another restart the membership is the toggled one.
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/sets/linkfree_table.hpp"
#include "ferrite/sim/rng.hpp"
#include "ferrite/sim/target.hpp"
#include "set_history.hpp"
#include "sets_targets.hpp"

namespace ferrite::crash {
namespace {

using sets_check::op_kind;
using table = sets::linkfree_table<std::uint64_t>;

constexpr std::uint64_t heap_bytes = 128 * 1024;
constexpr std::uint64_t key_base = 0x1000;  // keys key_base .. key_base + key_range - 1

struct op_record {
    std::atomic<std::uint64_t> invoked{0}, completed{0};
    std::atomic<bool> response{false};
};

class linkfree_workload final : public sim::workload {
public:
    linkfree_workload(pmem::pool& p, const sim::run_config& c, sets::set_layout l)
        : config_(c), layout_(l), keys_(l == sets::set_layout::list ? 16 : 24), progress_(c.threads),
          records_(std::make_unique<op_record[]>(c.threads * c.ops_per_thread)),
          heap_(alloc::buddy_heap::create(p, heap_offset(p), heap_bytes)),
          set_(table::create(p, heap_, anchor(p), l, options())) {}

    static std::uint64_t root_bytes() { return 64 + heap_bytes; }
    static std::byte* root(pmem::pool& p) { return static_cast<std::byte*>(p.root_bytes(root_bytes())); }
    static std::uint64_t& anchor(pmem::pool& p) { return *reinterpret_cast<std::uint64_t*>(root(p)); }
    static std::uint64_t heap_offset(pmem::pool& p) { return static_cast<std::uint64_t>(root(p) - p.base()) + 64; }
    static table::options options(unsigned recovery_threads = 1) {
        table::options o;
        o.area_bytes = 4096;
        o.growth_check_interval = 1;
        o.recovery_threads = recovery_threads;
        return o;
    }

    struct op_desc {
        op_kind op;
        std::uint64_t key;
    };
    op_desc op_of(unsigned tid, std::uint64_t i) const {
        const auto r = sim::mix(config_.seed, (std::uint64_t{tid} << 40) ^ i);
        const auto what = r % 8;  // 3/8 insert, 3/8 erase, 2/8 contains
        const op_kind op = what < 3 ? op_kind::insert : what < 6 ? op_kind::erase : op_kind::contains;
        // Three in four operations go to two hot keys, so that they meet mid-operation often.
        const std::uint64_t key = (r >> 12) % 4 != 0 ? (r >> 16) % 2 : (r >> 16) % keys_;
        return {op, key_base + key};
    }

    void run_thread(unsigned tid) override {
        for (std::uint64_t i = 0; i < config_.ops_per_thread; ++i) {
            const auto [op, key] = op_of(tid, i);
            auto& rec = records_[tid * config_.ops_per_thread + i];
            rec.invoked.store(clock_.fetch_add(1) + 1);  // before begin(): a pending operation has its stamp
            progress_.begin(tid);
            bool r = false;
            switch (op) {
                case op_kind::insert: r = set_.insert(key); break;
                case op_kind::erase: r = set_.erase(key); break;
                default: r = set_.contains(key); break;
            }
            rec.response.store(r);
            rec.completed.store(clock_.fetch_add(1) + 1);
            progress_.end(tid);
        }
    }

    const sim::op_progress& progress() const noexcept override { return progress_; }

    void recover(pmem::pool& image) const override {
        auto heap = alloc::buddy_heap::open(image, heap_offset(image));
        heap.recover();
        table::recover(image, heap, anchor(image));
        heap.finish_recovery();
        (void)table::open(image, heap, anchor(image), layout_, options());
    }

    std::string verify(pmem::pool& image, const sim::progress_snapshot& at_crash) const override {
        auto heap = alloc::buddy_heap::open(image, heap_offset(image));
        heap.recover();
        table::recover(image, heap, anchor(image));
        heap.finish_recovery();
        auto s = table::open(image, heap, anchor(image), layout_, options(2));
        if (auto problem = check_heap(image, heap); !problem.empty()) return problem;
        std::set<std::uint64_t> members;
        std::string problem;
        s.for_each([&](const std::uint64_t& k, const sets::no_value&) {
            if (k < key_base || k >= key_base + keys_) problem = "recovered a key never inserted: " + std::to_string(k);
            if (!members.insert(k).second) problem = "key " + std::to_string(k) + " listed twice";
        });
        if (!problem.empty()) return problem;
        if (auto p = check_history(members, at_crash); !p.empty()) return p;
        return check_after_recovery(image, heap, s, members);
    }

private:
    // The heap is consistent and its live blocks are exactly the set's header and areas.
    static std::string check_heap(pmem::pool& image, const alloc::buddy_heap& heap) {
        if (auto problems = heap.check(); !problems.empty()) return "heap: " + problems.front();
        const auto owned_list = table::validate(image, heap, anchor(image));
        const std::unordered_set<std::uint64_t> owned(owned_list.begin(), owned_list.end());
        const std::uint64_t in_pool = heap_offset(image);
        std::size_t live = 0;
        for (const auto& b : heap.blocks()) {
            if (b.state == alloc::block_state::free) continue;
            if (b.state != alloc::block_state::live)
                return std::string("heap: a block is still ") + alloc::to_string(b.state) + " after recovery";
            if (!owned.contains(in_pool + b.offset))
                return "heap: leak: the live block at heap offset " + std::to_string(b.offset) + " is not the set's";
            ++live;
        }
        if (live != owned.size()) return "heap: a block of the set is not live";
        return {};
    }

    std::string check_history(const std::set<std::uint64_t>& members, const sim::progress_snapshot& at_crash) const {
        std::vector<sets_check::event> history;
        for (unsigned t = 0; t < config_.threads; ++t) {
            const auto done = at_crash[t].completed;
            const auto last = done + (at_crash[t].pending ? 1 : 0);
            for (std::uint64_t i = 0; i < last && i < config_.ops_per_thread; ++i) {
                const auto [op, key] = op_of(t, i);
                const auto& rec = records_[t * config_.ops_per_thread + i];
                sets_check::event e;
                e.what = {op, key - key_base, 0};
                e.returned = i < done;
                e.got.flag = e.returned && rec.response.load();
                e.invoked = rec.invoked.load();
                e.returned_at = e.returned ? rec.completed.load() : sets_check::never;
                e.tid = t;
                e.index = i;
                history.push_back(e);
            }
        }
        std::map<std::uint64_t, std::uint64_t> recovered;  // key - key_base -> 0 (a set's value)
        for (const auto k : members) recovered[k - key_base] = 0;
        if (auto p = sets_check::check_history(history, recovered, keys_); !p.empty())
            return p + " (keys counted from " + std::to_string(key_base) + ")";
        return {};
    }

    // Every key toggled on the recovered set, then a restart: the membership is the toggled one.
    std::string check_after_recovery(pmem::pool& image, alloc::buddy_heap& heap, table& s,
                                     std::set<std::uint64_t> members) const {
        for (std::uint64_t k = key_base; k < key_base + keys_; ++k) {
            const bool present = members.contains(k);
            if (present ? !s.erase(k) : !s.insert(k))
                return "after recovery: " + std::string(present ? "erase" : "insert") + " of key " + std::to_string(k) +
                       " answered as if the key were " + (present ? "absent" : "present");
            if (present) members.erase(k);
            else members.insert(k);
        }
        { auto closed = std::move(s); }
        auto again = table::open(image, heap, anchor(image), layout_, options());
        std::set<std::uint64_t> seen;
        again.for_each([&](const std::uint64_t& k, const sets::no_value&) { seen.insert(k); });
        if (seen != members)
            return "after recovery: " + std::to_string(seen.size()) + " keys after a restart, " +
                   std::to_string(members.size()) + " expected";
        return {};
    }

    sim::run_config config_;
    sets::set_layout layout_;
    std::uint64_t keys_;
    sim::op_progress progress_;
    std::unique_ptr<op_record[]> records_;
    std::atomic<std::uint64_t> clock_{0};
    alloc::buddy_heap heap_;  // before set_: the set's areas grow into it
    table set_;
};

class linkfree_target final : public sim::target {
public:
    linkfree_target(std::string name, std::string summary, sets::set_layout l)
        : name_(std::move(name)), summary_(std::move(summary)), layout_(l) {}
    std::string_view name() const override { return name_; }
    std::string_view summary() const override { return summary_; }
    std::uint64_t pool_size(const sim::run_config&) const override {
        return (4096 + linkfree_workload::root_bytes() + 4096 + 4095) / 4096 * 4096;
    }
    unsigned default_threads() const override { return 3; }
    std::uint64_t default_ops_per_thread() const override { return 200; }
    // Its own code: the heap's and the node store's sites are their targets' to kill.
    std::vector<std::string> mutation_scope() const override {
        return {"include/ferrite/sets/linkfree_", "src/sets/linkfree_"};
    }
    std::unique_ptr<sim::workload> prepare(pmem::pool& fresh, const sim::run_config& c) const override {
        return std::make_unique<linkfree_workload>(fresh, c, layout_);
    }

private:
    std::string name_, summary_;
    sets::set_layout layout_;
};

}  // namespace

void sets_targets::register_linkfree_targets(sim::target_registry& r) {
    r.add(std::make_unique<linkfree_target>(
        "linkfree-list", "link-free durable set, list layout (sets/linkfree_table.hpp): insert/erase/contains",
        sets::set_layout::list));
    r.add(std::make_unique<linkfree_target>(
        "linkfree-hash",
        "link-free durable set, split-ordered hash layout growing from one bucket: insert/erase/contains",
        sets::set_layout::hash));
}

}  // namespace ferrite::crash
