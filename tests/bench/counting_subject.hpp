// tests/bench/counting_subject.hpp: a tiny in-test bench subject that counts what the
// harness does to it (subjects made, attaches, operations by kind) in a ledger the test owns,
// and issues one pwb per operation and one pfence per two, so persistence per op is known.
// With a batch size it poses as a combining structure: it reports a record
// (combining/stats.hpp) of what it issued, with one pass per `batch` operations.
#pragma once

#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <vector>

#include "bench/subject.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace ferrite::bench::testing {

struct ledger {
    std::atomic<unsigned> made{0};
    std::atomic<unsigned> attached{0};
    std::atomic<unsigned> detached{0};
    std::array<std::atomic<std::uint64_t>, op_count> ops{};
    std::atomic<std::uint64_t> ops_before_attach{0};
    std::mutex m;
    std::vector<subject_config> configs;  // one per subject made

    std::uint64_t count(op o) const { return ops[static_cast<std::size_t>(o)].load(); }
    std::uint64_t total() const {
        std::uint64_t t = 0;
        for (const auto& c : ops) t += c.load();
        return t;
    }
};

struct counting_behaviour {
    bool counted = true;         // persistence_counted()
    double batch = 2.5;          // the record's mean batch size (0: no record, not combining)
    std::uint64_t throw_at = 0;  // throw from run() at this operation of tid 0 (0: never)
};

class counting_subject final : public subject {
public:
    counting_subject(ledger& l, const subject_config& c, counting_behaviour b)
        : ledger_(l), behaviour_(b), attached_(c.threads) {
        ++ledger_.made;
        std::lock_guard lock(ledger_.m);
        ledger_.configs.push_back(c);
    }
    void attach(unsigned tid) override {
        attached_.at(tid) = 1;
        ++ledger_.attached;
    }
    void detach(unsigned) override { ++ledger_.detached; }
    void run(unsigned tid, op o, std::uint64_t, std::uint64_t) override {
        if (!attached_.at(tid)) ++ledger_.ops_before_attach;
        const auto n = ++ledger_.ops[static_cast<std::size_t>(o)];
        alignas(64) static thread_local std::uint64_t line = 0;
        ++line;
        pmem::pwb(&line);
        pwbs_.fetch_add(1);
        if (++mine_ % 2 == 0) {
            pmem::pfence();
            pfences_.fetch_add(1);
        }
        done_.fetch_add(1);
        if (tid == 0 && behaviour_.throw_at && mine_ == behaviour_.throw_at)
            throw std::runtime_error("counting_subject: planned failure");
        (void)n;
    }
    std::optional<combining::combining_stats> combining_stats() const override {
        if (behaviour_.batch <= 0) return std::nullopt;
        combining::combining_stats r;
        r.operations = done_.load();
        r.passes = static_cast<std::uint64_t>(std::llround(static_cast<double>(r.operations) / behaviour_.batch));
        r.combiner.pwb_lines = pwbs_.load();
        r.combiner.pfences = pfences_.load();
        r.total = r.combiner;
        return r;
    }
    bool persistence_counted() const override { return behaviour_.counted; }

private:
    ledger& ledger_;
    counting_behaviour behaviour_;
    std::vector<unsigned char> attached_;  // each written by its own worker only
    std::atomic<std::uint64_t> done_{0}, pwbs_{0}, pfences_{0};  // the record's
    static thread_local std::uint64_t mine_;
};

inline thread_local std::uint64_t counting_subject::mine_ = 0;

inline subject_kind counting_kind(ledger& l, std::string name = "counting",
                                  std::vector<op> supports = {op::push_back, op::pop_back, op::push_front,
                                                              op::pop_front, op::get, op::swap},
                                  counting_behaviour b = {}) {
    return {std::move(name), "in-test counting subject", std::move(supports),
            [&l, b](const subject_config& c) { return std::make_unique<counting_subject>(l, c, b); }};
}

// The same subject as a keyed structure (maps, sets): it supports every keyed operation.
inline subject_kind keyed_counting_kind(ledger& l, std::string name = "keyed-counting",
                                        std::vector<op> supports = {op::insert, op::erase, op::contains, op::get,
                                                                    op::put, op::scan}) {
    auto k = counting_kind(l, std::move(name), std::move(supports));
    k.family = op_family::keyed;
    return k;
}

}  // namespace ferrite::bench::testing
