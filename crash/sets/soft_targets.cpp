// crash/sets/soft_targets.cpp: crash targets soft-list, soft-hash and soft-map (the SOFT
// durable sets of include/ferrite/sets/soft_table.hpp), and their registration.
//
//   soft-list  a set of u64 on the ordered list: insert / erase / contains on 16 keys
//   soft-hash  a set of u64 on the hash table, from ONE bucket that grows (a load check on
//              every insert) over 32 keys, so crashes hit growth and recovery rebuilds at
//              several bucket counts
//   soft-map   a u64 -> u64 map, mostly insert_or_assign (the in-place upsert of
//              soft_list.hpp) with insert / erase / get, on 16 keys; even seeds use the hash
//              layout, odd seeds the list
//   soft-reopen  the soft-map mix on 6 keys, 80 operations on thread 1, while thread 0
//              closes and opens the table every 8 of them (a hand-over through one atomic
//              word; the waits pass the simulator's token): the open's writes (durable
//              deletes of superseded PNodes, normalisation) are observed, and later crashes
//              find out whether they were durable before their slots were reused (a crash
//              inside recovery cannot: the next recovery redoes them). With --threads 1 the
//              one thread does both; threads beyond 2 run nothing.
// 3 threads by default, 100 operations each, each value unique to (thread, operation).
//
// Pool: the root holds the anchor word's line, then a buddy heap that the node store's
// 4 KiB areas grow into. Recovery (restartable; the simulator crashes it too): heap.recover,
// soft_table::recover, heap.finish_recovery, soft_table::open on 2 threads (the open
// validates, rebuilds, and writes: normalisation, durable deletes of superseded PNodes and
// of an interrupted upsert's duplicate, one fence).
// Checker (verify), after recovering once more: the heap is consistent and its live blocks
// are exactly the set's (nothing leaked, nothing pending); for_each visits each key once and
// agrees with get and size; durable linearizability key by key (set_history.hpp); then the
// recovered table keeps working: a seeded mix of operations on every key, each response
// the model's, and after closing and opening it again the contents are the model's.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/pmem/primitives.hpp"  // wait_hint
#include "ferrite/sets/soft_table.hpp"
#include "ferrite/sim/rng.hpp"
#include "ferrite/sim/target.hpp"
#include "set_history.hpp"
#include "sets_targets.hpp"

namespace ferrite::crash {
namespace {

using namespace sets_check;

constexpr std::uint64_t heap_bytes = 192 * 1024;
constexpr std::uint64_t pool_bytes = 256 * 1024;

struct target_spec {
    bool map = false;             // values (insert_or_assign, get) or a set
    std::uint64_t keys = 16;
    bool growing_hash = false;    // hash layout for every seed, load check every insert
    std::uint64_t reopen_every = 0;  // thread 0 alone: close and open the table every n ops
};

template <class Table>
class soft_workload final : public sim::workload {
public:
    soft_workload(pmem::pool& p, const sim::run_config& c, target_spec spec)
        : config_(c), spec_(spec), pool_(p), progress_(c.threads), records_(c.threads, std::vector<record>(c.ops_per_thread)),
          heap_(alloc::buddy_heap::create(p, heap_offset(p), heap_bytes)) {
        table_ = std::make_unique<Table>(Table::create(p, heap_, anchor(p), layout(), options()));
    }

    static std::uint64_t& anchor(pmem::pool& p) { return *static_cast<std::uint64_t*>(p.root_bytes(64 + heap_bytes)); }
    static std::uint64_t heap_offset(pmem::pool& p) {
        return static_cast<std::uint64_t>(static_cast<std::byte*>(p.root_bytes(64 + heap_bytes)) - p.base()) + 64;
    }
    sets::set_layout layout() const {
        if (spec_.growing_hash) return sets::set_layout::hash;
        if (!spec_.map) return sets::set_layout::list;
        return config_.seed % 2 == 0 ? sets::set_layout::hash : sets::set_layout::list;
    }
    typename Table::options options(unsigned recovery_threads = 2) const {
        typename Table::options o;
        o.recovery_threads = recovery_threads;
        o.area_bytes = 4096;
        o.growth_check_interval = spec_.growing_hash ? 1 : 64;
        return o;
    }

    // Operation i of thread tid, a function of (seed, tid, i).
    op op_of(unsigned tid, std::uint64_t i) const {
        const auto r = sim::mix(config_.seed, (std::uint64_t{tid} << 40) ^ i);
        op o;
        o.key = (r >> 8) % spec_.keys;
        o.value = spec_.map ? (std::uint64_t{tid + 1} << 32 | (i + 1)) : 0;
        const unsigned pick = static_cast<unsigned>(r % 20);
        if (spec_.map)  // 8 assign, 3 insert, 5 erase, 4 get
            o.kind = pick < 8 ? op_kind::assign : pick < 11 ? op_kind::insert : pick < 16 ? op_kind::erase : op_kind::get;
        else  // 8 insert, 7 erase, 5 contains
            o.kind = pick < 8 ? op_kind::insert : pick < 15 ? op_kind::erase : op_kind::contains;
        return o;
    }

    static response run(Table& t, const op& o) {
        using V = typename Table::mapped_type;
        if constexpr (std::is_same_v<V, sets::no_value>) {
            switch (o.kind) {
                case op_kind::insert: return {t.insert(o.key), {}};
                case op_kind::erase: return {t.erase(o.key), {}};
                default: return {t.contains(o.key), {}};
            }
        } else {
            switch (o.kind) {
                case op_kind::insert: return {t.insert(o.key, o.value), {}};
                case op_kind::erase: return {t.erase(o.key), {}};
                case op_kind::contains: return {t.contains(o.key), {}};
                case op_kind::get: {
                    auto v = t.get(o.key);
                    return {false, v ? std::optional<std::uint64_t>(*v) : std::nullopt};
                }
                default: return {t.insert_or_assign(o.key, o.value), {}};
            }
        }
    }

    // soft-reopen: the thread that runs the operations (the other one reopens the table).
    unsigned worker() const { return config_.threads >= 2 ? 1 : 0; }
    bool runs_ops(unsigned tid) const { return spec_.reopen_every == 0 || tid == worker(); }

    void run_thread(unsigned tid) override {
        if (spec_.reopen_every != 0 && tid != worker()) {
            if (tid == 0) run_restarter();
            return;
        }
        for (std::uint64_t i = 0; i < config_.ops_per_thread; ++i) {
            if (spec_.reopen_every != 0 && i != 0 && i % spec_.reopen_every == 0) reopen_now();
            const op o = op_of(tid, i);
            auto& rec = records_[tid][i];
            rec.invoked = clock_.fetch_add(1) + 1;
            progress_.begin(tid);
            rec.got = run(*table_, o);
            rec.returned_at = clock_.fetch_add(1) + 1;
            progress_.end(tid);
        }
        if (spec_.reopen_every != 0) turn_.store(done, std::memory_order_release);
    }

    const sim::op_progress& progress() const noexcept override { return progress_; }

    void recover(pmem::pool& image) const override {
        auto heap = alloc::buddy_heap::open(image, heap_offset(image));
        heap.recover();
        Table::recover(image, heap, anchor(image));
        heap.finish_recovery();
        Table::open(image, heap, anchor(image), layout(), options());
    }

    std::string verify(pmem::pool& image, const sim::progress_snapshot& at_crash) const override {
        auto heap = alloc::buddy_heap::open(image, heap_offset(image));
        heap.recover();
        if (auto problems = heap.check(); !problems.empty()) return "heap inconsistent: " + problems.front();
        if (auto leak = check_blocks(image, heap); !leak.empty()) return leak;
        Table::recover(image, heap, anchor(image));
        heap.finish_recovery();
        auto t = std::make_unique<Table>(Table::open(image, heap, anchor(image), layout(), options(1)));
        std::map<std::uint64_t, std::uint64_t> contents;
        if (auto problem = read_contents(*t, contents); !problem.empty()) return problem;

        std::vector<event> history;
        for (unsigned tid = 0; tid < config_.threads; ++tid) {
            if (!runs_ops(tid)) continue;
            const auto& pr = at_crash[tid];
            for (std::uint64_t i = 0; i < pr.completed + (pr.pending ? 1 : 0) && i < config_.ops_per_thread; ++i) {
                const auto& rec = records_[tid][i];
                event e;
                e.what = op_of(tid, i);
                e.returned = i < pr.completed;
                e.got = rec.got;
                e.invoked = rec.invoked;
                e.returned_at = e.returned ? rec.returned_at : ~std::uint64_t{0};
                e.tid = tid;
                e.index = i;
                history.push_back(e);
            }
        }
        if (auto problem = check_history(history, contents, spec_.keys); !problem.empty()) return problem;
        return check_after_recovery(image, heap, std::move(t), contents);
    }

private:
    static constexpr std::uint64_t done = ~std::uint64_t{0};

    // A clean close and open of the table, observed: the open's own writes are under test
    // (durable deletes of superseded PNodes before their targets are reused). With two
    // threads the open runs on thread 0 and the operations on thread 1, so only the open's
    // own fence can make its write-backs durable before the worker reuses a slot.
    void reopen_table() {
        table_.reset();
        table_ = std::make_unique<Table>(Table::open(pool_, heap_, anchor(pool_), layout(), options(1)));
    }
    void reopen_now() {
        if (worker() == 0) return reopen_table();
        turn_.fetch_add(1, std::memory_order_acq_rel);  // odd: the restarter's turn
        while (turn_.load(std::memory_order_acquire) % 2 != 0) pmem::wait_hint();
    }
    void run_restarter() {
        while (true) {
            std::uint64_t t = turn_.load(std::memory_order_acquire);
            while (t % 2 == 0 && t != done) {
                pmem::wait_hint();
                t = turn_.load(std::memory_order_acquire);
            }
            if (t == done) return;
            reopen_table();
            turn_.store(t + 1, std::memory_order_release);
        }
    }

    struct record {
        std::uint64_t invoked = 0, returned_at = 0;
        response got;
    };

    // for_each visits every key once, agreeing with get and size.
    static std::string read_contents(const Table& t, std::map<std::uint64_t, std::uint64_t>& out) {
        std::string problem;
        std::size_t visits = 0;
        t.for_each([&](const std::uint64_t& k, const auto& v) {
            ++visits;
            std::uint64_t value = 0;
            if constexpr (!std::is_same_v<std::decay_t<decltype(v)>, sets::no_value>) value = v;
            if (!out.emplace(k, value).second && problem.empty()) problem = "for_each visited key " + std::to_string(k) + " twice";
        });
        if (!problem.empty()) return problem;
        if (t.size() != visits)
            return "size() is " + std::to_string(t.size()) + " after recovery, for_each visited " + std::to_string(visits);
        for (const auto& [k, v] : out) {
            auto got = t.get(k);
            if (!got) return "for_each visited key " + std::to_string(k) + ", get does not find it";
            if constexpr (!std::is_same_v<typename Table::mapped_type, sets::no_value>) {
                if (*got != v) return "get(" + std::to_string(k) + ") disagrees with for_each";
            }
        }
        return {};
    }

    // Every non-free heap block is live and one of the set's (header and areas), and each
    // of those is live.
    static std::string check_blocks(pmem::pool& image, const alloc::buddy_heap& heap) {
        const auto owned = Table::validate(image, heap, anchor(image));
        const auto in_pool = static_cast<std::uint64_t>(heap.base() - image.base());
        std::size_t live = 0;
        for (const auto& b : heap.blocks()) {
            if (b.state == alloc::block_state::free) continue;
            ++live;
            if (b.state != alloc::block_state::live && b.state != alloc::block_state::allocation_pending)
                return std::string("a heap block is ") + alloc::to_string(b.state) + " after recovery";
            if (std::find(owned.begin(), owned.end(), in_pool + b.offset) == owned.end())
                return "leak: the heap block at heap offset " + std::to_string(b.offset) + " is not the set's";
        }
        if (live != owned.size())
            return "the heap holds " + std::to_string(live) + " blocks in use, the set owns " + std::to_string(owned.size());
        return {};
    }

    // The recovered table keeps working: a seeded mix on every key, each response the
    // model's; then closed, opened again (no crash), the contents are the model's.
    std::string check_after_recovery(pmem::pool& image, alloc::buddy_heap& heap, std::unique_ptr<Table> t,
                                     std::map<std::uint64_t, std::uint64_t> model) const {
        sim::rng rng(sim::mix(config_.seed, 0xa11));
        for (int round = 0; round < 3; ++round) {
            for (std::uint64_t k = 0; k < spec_.keys; ++k) {
                op o;
                o.key = k;
                o.value = spec_.map ? (std::uint64_t{0xaf} << 32 | (static_cast<std::uint64_t>(round) << 8) | k) : 0;
                const auto r = rng.next() % 4;
                o.kind = r == 0 ? op_kind::erase : r == 1 ? op_kind::insert : spec_.map && r == 2 ? op_kind::assign : op_kind::contains;
                if (!spec_.map && o.kind == op_kind::assign) o.kind = op_kind::insert;
                auto it = model.find(k);
                state s = it == model.end() ? state{} : state{it->second};
                const response want = apply_op(s, o);
                if (s) model[k] = *s; else model.erase(k);
                if (!(run(*t, o) == want))
                    return "after recovery: " + std::string(name_of(o.kind)) + " " + std::to_string(k) + " answered unlike the model";
            }
        }
        t.reset();
        t = std::make_unique<Table>(Table::open(image, heap, anchor(image), layout(), options(1)));
        std::map<std::uint64_t, std::uint64_t> again;
        if (auto problem = read_contents(*t, again); !problem.empty()) return "after reopening: " + problem;
        if (again != model) return "after recovery: the contents after closing and opening again are not the model's";
        return {};
    }

    sim::run_config config_;
    target_spec spec_;
    pmem::pool& pool_;
    sim::op_progress progress_;
    std::atomic<std::uint64_t> clock_{0};
    std::atomic<std::uint64_t> turn_{0};  // soft-reopen: even: the worker runs; odd: the table is being reopened
    std::vector<std::vector<record>> records_;
    alloc::buddy_heap heap_;
    std::unique_ptr<Table> table_;
};

template <class Table>
class soft_target final : public sim::target {
public:
    soft_target(std::string name, std::string summary, target_spec spec)
        : name_(std::move(name)), summary_(std::move(summary)), spec_(spec) {}
    std::string_view name() const override { return name_; }
    std::string_view summary() const override { return summary_; }
    std::uint64_t pool_size(const sim::run_config&) const override { return pool_bytes; }
    unsigned default_threads() const override { return spec_.reopen_every != 0 ? 2 : 3; }
    // Long enough that the epoch domain reclaims during a run (it collects every 64 unpins
    // of a thread), so crashes also hit PNodes reused after a remove or a replacement.
    std::uint64_t default_ops_per_thread() const override { return spec_.reopen_every != 0 ? 80 : 100; }
    // Its own code (the node store's and the heap's sites are their targets' to kill). The
    // recovery's write-backs matter only for a crash after a recovery and more operations,
    // which only soft-reopen runs, so the other targets answer for the operations' sites.
    std::vector<std::string> mutation_scope() const override {
        if (spec_.reopen_every != 0) return {"include/ferrite/sets/soft_", "include/ferrite/sets/split_order"};
        return {"include/ferrite/sets/soft_list", "include/ferrite/sets/soft_pnode", "include/ferrite/sets/split_order"};
    }
    std::unique_ptr<sim::workload> prepare(pmem::pool& fresh, const sim::run_config& c) const override {
        return std::make_unique<soft_workload<Table>>(fresh, c, spec_);
    }

private:
    std::string name_, summary_;
    target_spec spec_;
};

}  // namespace

void sets_targets::register_soft_targets(sim::target_registry& r) {
    using set_t = sets::soft_table<std::uint64_t>;
    using map_t = sets::soft_table<std::uint64_t, std::uint64_t>;
    r.add(std::make_unique<soft_target<set_t>>(
        "soft-list", "SOFT durable set, ordered list layout: insert/erase/contains on 16 keys", target_spec{false, 16, false}));
    r.add(std::make_unique<soft_target<set_t>>(
        "soft-hash", "SOFT durable set, split-ordered hash growing from one bucket: insert/erase/contains on 32 keys",
        target_spec{false, 32, true}));
    r.add(std::make_unique<soft_target<map_t>>(
        "soft-map", "SOFT durable map (hash on even seeds, list on odd): insert_or_assign/insert/erase/get on 16 keys",
        target_spec{true, 16, false}));
    r.add(std::make_unique<soft_target<map_t>>(
        "soft-reopen", "SOFT durable map on one thread, closed and opened every 8 operations: the open's writes under test",
        target_spec{true, 6, false, 8}));
}

}  // namespace ferrite::crash
