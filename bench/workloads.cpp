// bench/workloads.cpp: the workload table and the per-thread operation streams.
#include "bench/workloads.hpp"

#include <algorithm>

namespace ferrite::bench {

const std::vector<workload>& workloads() {
    static const std::vector<workload> all = {
        {"push-pop", "each thread alternates push_back and pop_back (thesis Fig. 6.1)",
         {op::push_back, op::pop_back}, 0, pattern::push_pop},
        {"swap-push-pop", "push_back, swap, pop_back, swap, ...: half swaps of random indices, half push-pop",
         {op::push_back, op::pop_back, op::swap}, default_initial_size, pattern::swap_push_pop},
        {"swap", "pure swap of two random indices",
         {op::swap}, default_initial_size, pattern::swap},
        {"get-push-pop", "push_back, get, pop_back, get, ...: half gets of a random index, half push-pop",
         {op::push_back, op::pop_back, op::get}, default_initial_size, pattern::get_push_pop},
        {"get", "pure get of a random index",
         {op::get}, default_initial_size, pattern::get},
        {"rand-op", "push_back or pop_back at random, 50/50",
         {op::push_back, op::pop_back}, 0, pattern::rand_op},
        {"enq-deq", "push_back then pop_front pairs (queue enqueue/dequeue)",
         {op::push_back, op::pop_front}, 0, pattern::enq_deq},
        {"deque-pairs", "a random side, then push and pop at that side",
         {op::push_back, op::pop_back, op::push_front, op::pop_front}, 0, pattern::deque_pairs},
        // Keyed workloads (maps, sets).
        {"set-mix", "contains (--reads %, default 90), else insert or erase 50/50, keys in [0, 2 x --keys)",
         {op::contains, op::insert, op::erase}, default_keys, pattern::set_mix, op_family::keyed,
         key_distribution::uniform},
        {"ycsb-load", "YCSB load: insert new keys only",
         {op::insert}, 0, pattern::ycsb_load, op_family::keyed, key_distribution::zipfian},
        {"ycsb-a", "YCSB A: 50% get, 50% put of present keys (Zipfian by default)",
         {op::get, op::put}, default_keys, pattern::ycsb_a, op_family::keyed, key_distribution::zipfian},
        {"ycsb-b", "YCSB B: 95% get, 5% put",
         {op::get, op::put}, default_keys, pattern::ycsb_b, op_family::keyed, key_distribution::zipfian},
        {"ycsb-c", "YCSB C: get only",
         {op::get}, default_keys, pattern::ycsb_c, op_family::keyed, key_distribution::zipfian},
        {"ycsb-e", "YCSB E: 95% scan of 1-100 keys from a present key, 5% insert of new keys",
         {op::scan, op::insert}, default_keys, pattern::ycsb_e, op_family::keyed, key_distribution::zipfian},
        // Durable sets (issue 18).
        {"set-recovery", "close and reopen a structure of --keys keys; time its open() with --threads recovery "
         "threads (ops = keys found)",
         {}, default_keys, pattern::set_recovery, op_family::keyed, key_distribution::uniform, true},
        // The CpNvm trees (issue 19).
        {"tree-recovery", "close and reopen a structure of --keys keys; time its open() with --threads load threads "
         "and its first completed lookup, then check every key (untimed; ops = keys found)",
         {op::get}, default_keys, pattern::tree_recovery, op_family::keyed, key_distribution::uniform, true},
        {"set-growth", "grow from 1024 keys to --keys by inserts (timed, latency while the table doubles), then "
         "--ops steady erase+insert pairs per thread at that size (steady-state insert latency)",
         {op::insert, op::erase}, default_keys, pattern::set_growth, op_family::keyed},
    };
    return all;
}

const workload* find_workload(std::string_view name) {
    for (const auto& w : workloads())
        if (w.name == name) return &w;
    return nullptr;
}

std::string_view to_string(op o) noexcept {
    switch (o) {
    case op::push_back: return "push_back";
    case op::pop_back: return "pop_back";
    case op::push_front: return "push_front";
    case op::pop_front: return "pop_front";
    case op::get: return "get";
    case op::swap: return "swap";
    case op::insert: return "insert";
    case op::erase: return "erase";
    case op::contains: return "contains";
    case op::put: return "put";
    case op::scan: return "scan";
    }
    return "?";
}

std::string_view to_string(key_distribution d) noexcept {
    return d == key_distribution::zipfian ? "zipfian" : "uniform";
}

std::optional<key_distribution> key_distribution_from_string(std::string_view s) noexcept {
    if (s == "uniform") return key_distribution::uniform;
    if (s == "zipfian") return key_distribution::zipfian;
    return std::nullopt;
}

std::string_view to_string(op_family f) noexcept { return f == op_family::keyed ? "keyed" : "sequence"; }

bool can_run(const std::vector<op>& supports, const workload& w, std::vector<op>* missing) {
    bool ok = true;
    for (op o : w.needs) {
        if (std::find(supports.begin(), supports.end(), o) != supports.end()) continue;
        ok = false;
        if (missing) missing->push_back(o);
    }
    return ok;
}

bool can_run(const subject_kind& s, const workload& w) {
    return s.family == w.family && can_run(s.supports, w) && (s.reopens || !w.needs_reopen);
}

op_stream::op_stream(const workload& w, unsigned tid, std::uint64_t seed, std::uint64_t index_range,
                     const key_options& keys)
    : kind_(w.kind),
      reads_(keys.reads_percent),
      state_(seed * 0x9e3779b97f4a7c15ULL + (std::uint64_t{tid} + 1) * 0xbf58476d1ce4e5b9ULL),
      range_(index_range),
      value_base_((std::uint64_t{tid} + 1) << 40) {
    if (w.family != op_family::keyed) return;
    // set-mix draws keys in [0, 2N) directly; the YCSB workloads draw a record r < N.
    key_items_ = std::max<std::uint64_t>(1, w.kind == pattern::set_mix ? 2 * index_range : index_range);
    if (keys.distribution.value_or(w.distribution) == key_distribution::zipfian) zipfian_.emplace(key_items_);
}

std::uint64_t op_stream::draw() noexcept {
    const auto r = random();
    if (!zipfian_) return r % key_items_;
    return zipfian_->next(static_cast<double>(r >> 11) * 0x1.0p-53);  // u in [0, 1)
}

std::uint64_t op_stream::random() noexcept {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

op_stream::step op_stream::next() noexcept {
    const std::uint64_t i = i_++;
    switch (kind_) {
    case pattern::push_pop:
        return i % 2 == 0 ? step{op::push_back, value(), 0} : step{op::pop_back, 0, 0};
    case pattern::swap_push_pop:
    case pattern::get_push_pop: {
        if (i % 2 == 1) {
            if (kind_ == pattern::get_push_pop) return {op::get, index(), 0};
            const auto a = index();
            return {op::swap, a, index()};
        }
        return i % 4 == 0 ? step{op::push_back, value(), 0} : step{op::pop_back, 0, 0};
    }
    case pattern::swap: {
        const auto a = index();
        return {op::swap, a, index()};
    }
    case pattern::get:
        return {op::get, index(), 0};
    case pattern::rand_op:
        return random() & 1 ? step{op::push_back, value(), 0} : step{op::pop_back, 0, 0};
    case pattern::enq_deq:
        return i % 2 == 0 ? step{op::push_back, value(), 0} : step{op::pop_front, 0, 0};
    case pattern::deque_pairs:
        if (i % 2 == 1) return {pending_, 0, 0};
        if (random() & 1) {
            pending_ = op::pop_front;
            return {op::push_front, value(), 0};
        }
        pending_ = op::pop_back;
        return {op::push_back, value(), 0};
    case pattern::set_mix: {
        const auto x = random();
        const auto key = draw();
        if (percent(reads_, x)) return {op::contains, key, 0};
        return (x >> 32) & 1 ? step{op::insert, key, value()} : step{op::erase, key, 0};
    }
    case pattern::ycsb_load:
        return {op::insert, new_key(), value()};
    case pattern::set_growth: {  // its growth phase (the steady phase is the harness's)
        const auto k = new_key();  // new_key_of(tid, i) for the i-th insert: value = key
        return {op::insert, k, k};
    }
    case pattern::set_recovery:  // no stream: the harness times an open (never drawn)
    case pattern::tree_recovery:
        return {op::contains, 0, 0};
    case pattern::ycsb_a:
    case pattern::ycsb_b: {
        const bool read = percent(kind_ == pattern::ycsb_a ? 50 : 95, random());
        return read ? step{op::get, present_key(), 0} : step{op::put, present_key(), value()};
    }
    case pattern::ycsb_c:
        return {op::get, present_key(), 0};
    case pattern::ycsb_e: {
        if (percent(95, random())) {
            const auto first = present_key();
            return {op::scan, first, 1 + random() % max_scan_length};
        }
        return {op::insert, new_key(), value()};
    }
    }
    return {op::get, 0, 0};
}

}  // namespace ferrite::bench
