// ferrite/sim/target.hpp: what a structure provides to be crash-tested.
//
// A *target* names a structure plus a workload: it prepares the structure in a fresh pool
// and returns a *workload* for one run. The campaign (campaign.hpp) runs the workload's
// threads under a simulation session, takes crash images, maps each as a fresh pool, calls
// the workload's recover() (the structure's own recovery, possibly crashed and repeated) and
// then verify() against the progress every thread had made at the crash:
//
//   * every operation that returned before the crash is reflected;
//   * the pending one (at most one per thread) entirely or not at all;
//   * nothing invented or duplicated; the structure's invariants hold; nothing leaked;
//   * detectable structures: each thread's recovered response agrees with the state.
//
// Targets whose name starts with "buggy-" carry a seeded bug and are expected to fail:
// they test the simulator itself.
//
// Contract for run_thread(): the thread's operations are a function of (run seed, tid)
// only, it calls progress.begin/end around each operation, and it does not wait for other
// threads outside persistence calls (see token_scheduler.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferrite/pmem/pool.hpp"
#include "ferrite/sim/progress.hpp"

namespace ferrite::sim {

struct run_config {
    unsigned threads = 2;
    std::uint64_t ops_per_thread = 40;
    std::uint64_t seed = 1;
};

class workload {
public:
    virtual ~workload() = default;
    // The operations of thread `tid`, reporting progress through progress().
    virtual void run_thread(unsigned tid) = 0;
    virtual const op_progress& progress() const noexcept = 0;
    // Run the structure's recovery on a crash image of the pool. May be called again on
    // the result of an interrupted call (recovery must be restartable).
    virtual void recover(pmem::pool& image) const = 0;
    // After recover(): empty if the recovered state agrees with `at_crash`, else a one-line
    // description of the first violation.
    virtual std::string verify(pmem::pool& image, const progress_snapshot& at_crash) const = 0;
};

class target {
public:
    virtual ~target() = default;
    virtual std::string_view name() const = 0;
    virtual std::string_view summary() const = 0;
    bool seeded_bug() const { return name().starts_with("buggy-"); }
    // Pool size for a run (the crash image is this big: keep it small).
    virtual std::uint64_t pool_size(const run_config&) const { return 64 * 1024; }
    virtual unsigned default_threads() const { return 2; }
    virtual std::uint64_t default_ops_per_thread() const { return 40; }
    // Set the structure up in `fresh` (not observed: setup is not under test) and return
    // the workload of one run.
    virtual std::unique_ptr<workload> prepare(pmem::pool& fresh, const run_config&) const = 0;
    // The persistence sites this target answers for under flush mutation testing, as site-id
    // prefixes (e.g. "src/alloc/name_directory.cpp"); empty: every site it reaches. A target
    // built on other structures narrows it to its own code, because a flush that one
    // workload cannot observe (a heap flush in a workload that never reuses a block, say)
    // is still required, and killed, by the target of the structure that owns it.
    virtual std::vector<std::string> mutation_scope() const { return {}; }
};

// A target from a name, a summary and two functions: most targets need nothing more.
class simple_target final : public target {
public:
    using prepare_fn = std::function<std::unique_ptr<workload>(pmem::pool&, const run_config&)>;
    using size_fn = std::function<std::uint64_t(const run_config&)>;
    simple_target(std::string name, std::string summary, prepare_fn prepare, size_fn pool_size)
        : name_(std::move(name)), summary_(std::move(summary)), prepare_(std::move(prepare)),
          pool_size_(std::move(pool_size)) {}
    std::string_view name() const override { return name_; }
    std::string_view summary() const override { return summary_; }
    std::uint64_t pool_size(const run_config& c) const override { return pool_size_(c); }
    std::unique_ptr<workload> prepare(pmem::pool& p, const run_config& c) const override {
        return prepare_(p, c);
    }
    std::vector<std::string> mutation_scope() const override { return scope_; }
    simple_target&& with_mutation_scope(std::vector<std::string> prefixes) && {
        scope_ = std::move(prefixes);
        return std::move(*this);
    }

private:
    std::string name_, summary_;
    prepare_fn prepare_;
    size_fn pool_size_;
    std::vector<std::string> scope_;
};

// The targets ferrite knows, by name. Layers above sim register theirs at start-up through
// a function each (no static initialisers: they would be dropped from static libraries).
class target_registry {
public:
    void add(std::unique_ptr<target>);
    const target* find(std::string_view name) const noexcept;
    std::vector<const target*> all() const;  // sorted by name

private:
    std::vector<std::unique_ptr<target>> targets_;
};

}  // namespace ferrite::sim
