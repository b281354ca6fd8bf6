// bench/sets/set_subjects.cpp: the durable sets of issue 18 as keyed `ferrite bench`
// subjects, 8-byte keys and 8-byte values (the papers' one-word keys and values):
//
//   soft-hash      sets::soft_table, split-ordered hash layout (Zuriel et al. 2019, SOFT)
//   soft-list      sets::soft_table, one sorted list (the paper's list; small key ranges)
//   linkfree-hash  sets::linkfree_table, hash layout (link-free; no insert_or_assign, so
//                  no put: the YCSB update workloads are refused)
//   linkfree-list  sets::linkfree_table, one sorted list
//   volatile-hash  the same split-ordered SOFT table with persistence compiled out
//                  (soft_table<.., soft::no_persistence>: the same volatile nodes, states,
//                  helping, buckets and reclamation, no PNode, no node store, no pwb, no
//                  pfence), in DRAM: soft-hash over volatile-hash is what durability costs
//
// Each measurement builds its table in a fresh scratch pool (set_pool.hpp) whose heap holds
// the keys the workload may reach (subject_config::capacity_hint), and prefills it with the
// keys prefill_key(i), i < initial_size (values i; the hash tables created with
// expected_size = initial_size, their buckets ready), before any worker attaches: on several
// threads for large hash tables, in descending key order for the lists (each insert then
// stops at the head instead of walking the whole list). Operations: insert, erase,
// contains, get, and put = insert_or_assign where the table has it. pwb/op and pfence/op
// come from the pmem counters (automatic: no combining). The durable kinds reopen
// (set-recovery): the pool is closed and opened again, recovered as after a crash, and the
// table's open() rebuilds its index with the asked number of recovery threads.
// tree-recovery adds the first lookup (a get) to the timed open.
#include "bench/sets/set_subjects.hpp"

#include <algorithm>
#include <optional>
#include <thread>
#include <vector>

#include "bench/sets/set_pool.hpp"
#include "ferrite/sets/linkfree_table.hpp"
#include "ferrite/sets/soft_table.hpp"

namespace ferrite::bench {
namespace {

using key_type = std::uint64_t;
using value_type = std::uint64_t;

// Prefills of this many keys or more run on several threads (hash layout only).
constexpr std::uint64_t parallel_prefill_from = 1 << 16;

template <class Table>
concept has_upsert = requires(Table& t, const key_type& k, const value_type& v) { t.insert_or_assign(k, v); };

// Create options for a table that the prefill fills with n keys: its buckets made ready for
// them (expected_size), as the log-free baseline's fixed bucket array is sized from --keys;
// set-growth starts from growth_start_keys, so its growth is still measured.
// The ablation `grown` (subject_options::presized false) leaves them to the growth.
template <class Table>
typename Table::options sized_for(std::uint64_t n, const subject_options& s) {
    typename Table::options o{};
    o.expected_size = s.presized ? n : 0;
    return o;
}

// Fills `t` with prefill_key(i) -> i for i < n.
template <class Table>
void prefill(Table& t, std::uint64_t n, sets::set_layout l) {
    if (l == sets::set_layout::list) {
        for (std::uint64_t i = n; i-- > 0;) t.insert(prefill_key(i), i);
        return;
    }
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    const unsigned workers = n >= parallel_prefill_from ? std::min(hw, 8u) : 1;
    if (workers == 1) {
        for (std::uint64_t i = 0; i < n; ++i) t.insert(prefill_key(i), i);
        return;
    }
    std::vector<std::thread> threads;
    std::vector<std::exception_ptr> failures(workers);
    for (unsigned w = 0; w < workers; ++w)
        threads.emplace_back([&, w] {
            try {
                for (std::uint64_t i = w; i < n; i += workers) t.insert(prefill_key(i), i);
            } catch (...) {
                failures[w] = std::current_exception();
            }
        });
    for (auto& th : threads) th.join();
    for (auto& f : failures)
        if (f) std::rethrow_exception(f);
}

// The bench vocabulary on a table's interface (the kinds list what each supports).
template <class Table>
void run_op(Table& t, sink& s, op o, std::uint64_t a, std::uint64_t b) {
    switch (o) {
    case op::insert: (void)t.insert(a, b); break;
    case op::erase: (void)t.erase(a); break;
    case op::contains: s.v += t.contains(a) ? 1 : 0; break;
    case op::get:
        if (const auto v = t.get(a)) s.v += *v;
        break;
    case op::put:
        if constexpr (has_upsert<Table>) (void)t.insert_or_assign(a, b);
        break;
    default: break;  // not offered
    }
}

// A durable table (soft_table or linkfree_table) in its own scratch pool.
template <class Table>
class durable_table_subject final : public subject {
public:
    durable_table_subject(const subject_config& c, sets::set_layout l)
        : pool_(c.pool_dir, set_pool::heap_bytes_for(c.capacity_hint, c.initial_size)),
          layout_(l),
          sinks_(std::max(1u, c.threads)) {
        table_.emplace(Table::create(pool_.pool(), pool_.heap(), pool_.anchor(), l, sized_for<Table>(c.initial_size, c.options)));
        pool_.persist_anchor();
        prefill(*table_, c.initial_size, l);
    }
    ~durable_table_subject() override { table_.reset(); }  // before its pool

    void run(unsigned tid, op o, std::uint64_t a, std::uint64_t b) override { run_op(*table_, sinks_[tid], o, a, b); }

    void close_for_reopen() override {
        table_.reset();
        pool_.restart([](const pmem::pool_ref& p, alloc::buddy_heap& h, std::uint64_t anchor) {
            Table::recover(p, h, anchor);
        });
    }
    std::uint64_t reopen(unsigned recovery_threads) override {
        typename Table::options o{};
        o.recovery_threads = recovery_threads;
        table_.emplace(Table::open(pool_.pool(), pool_.heap(), pool_.anchor(), layout_, o));
        return table_->size();
    }
    std::optional<std::uint64_t> lookup_after_reopen(std::uint64_t key) override {
        if (const auto v = table_->get(key)) return static_cast<std::uint64_t>(*v);
        return std::nullopt;
    }

    bool visit(const std::function<void(std::uint64_t, std::uint64_t)>& f) const override {
        table_->for_each([&](const key_type& k, const value_type& v) { f(k, v); });
        return true;
    }
    std::optional<std::uint64_t> read_checksum(unsigned tid) const override { return sinks_[tid].v; }

private:
    set_pool pool_;
    sets::set_layout layout_;
    std::optional<Table> table_;
    std::vector<sink> sinks_;
};

// The persistence-off SOFT table: no pool (nothing to reopen).
class volatile_table_subject final : public subject {
public:
    using table = sets::soft_table<key_type, value_type, sets::soft::no_persistence>;

    explicit volatile_table_subject(const subject_config& c)
        : table_(table::create_volatile(sets::set_layout::hash, sized_for<table>(c.initial_size, c.options))),
          sinks_(std::max(1u, c.threads)) {
        prefill(table_, c.initial_size, sets::set_layout::hash);
    }
    void run(unsigned tid, op o, std::uint64_t a, std::uint64_t b) override { run_op(table_, sinks_[tid], o, a, b); }
    bool visit(const std::function<void(std::uint64_t, std::uint64_t)>& f) const override {
        table_.for_each([&](const key_type& k, const value_type& v) { f(k, v); });
        return true;
    }
    std::optional<std::uint64_t> read_checksum(unsigned tid) const override { return sinks_[tid].v; }

private:
    table table_;
    std::vector<sink> sinks_;
};

template <class Table>
std::vector<op> ops_of() {
    std::vector<op> v{op::insert, op::erase, op::contains, op::get};
    if constexpr (has_upsert<Table>) v.push_back(op::put);
    return v;
}

template <class Table>
subject_kind durable_kind(std::string name, std::string summary, sets::set_layout l) {
    subject_kind k{std::move(name), std::move(summary), ops_of<Table>(),
                   [l](const subject_config& c) { return std::make_unique<durable_table_subject<Table>>(c, l); },
                   op_family::keyed};
    k.reopens = true;
    return k;
}

using soft = sets::soft_table<key_type, value_type>;
using linkfree = sets::linkfree_table<key_type, value_type>;

}  // namespace

void register_set_subjects(std::vector<subject_kind>& out) {
    using sets::set_layout;
    out.push_back(durable_kind<soft>(
        "soft-hash", "SOFT durable hash map, split-ordered, resizable (0 pfence per read, 1 per update)", set_layout::hash));
    out.push_back(durable_kind<linkfree>(
        "linkfree-hash", "link-free durable hash map, split-ordered, resizable (1 psync per update; no put)",
        set_layout::hash));
    out.push_back({"volatile-hash",
                   "the soft-hash table with persistence compiled out (no PNode, pwb or pfence; DRAM only)",
                   ops_of<volatile_table_subject::table>(),
                   [](const subject_config& c) { return std::make_unique<volatile_table_subject>(c); },
                   op_family::keyed});
    out.push_back(durable_kind<soft>("soft-list", "SOFT durable sorted list (one list: small key ranges)", set_layout::list));
    out.push_back(durable_kind<linkfree>("linkfree-list", "link-free durable sorted list (small key ranges; no put)",
                                         set_layout::list));
}

}  // namespace ferrite::bench
