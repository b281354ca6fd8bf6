// bench/containers/vector_subjects.cpp: ferrite's vectors as `ferrite bench` subjects.
//
//   vector-pfc       ferrite::vector on PFC (publication list, futex waiting)
//   vector-fpfc      ferrite::vector on FPFC (slot per thread id)
//   vector-mutex     the same persistent vector core, each operation a batch of one under a
//                    std::mutex (the thesis's "Mutex" baseline: same persistence, no combining)
//   vector-volatile  the same engine (FPFC) over a DRAM vector with no persistence
//   vector-volatile-pfc  PFC over the same DRAM vector: what stack-pfc (the PFC engine over
//                    this core) could reach if persisting cost nothing
// Ablations (--ablation): no-nt = plain stores + pwb instead of NT stores; no-futex = the
// engines' pure-spin waiting; two-fence = pushes with a fence between the values and the state
// record (the protocol before format 2). Each subject builds its pool (64 MiB, a 48 MiB buddy heap) in
// the configured pool directory and removes it when destroyed (scratch_pool.hpp).
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <optional>

#include "bench/containers/scratch_pool.hpp"
#include "bench/containers/volatile_vector_core.hpp"
#include "bench/containers/vector_subjects.hpp"
#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/combining/fpfc.hpp"
#include "ferrite/combining/pfc.hpp"
#include "ferrite/containers/vector.hpp"

namespace ferrite::bench {
namespace {

using element = std::uint64_t;
using heap_type = alloc::buddy_heap;
namespace c = containers;

c::vector_options vector_options_of(const subject_options& o) {
    c::vector_options v;
    v.nt_stores = o.nt_stores;
    v.elimination = o.elimination;
    v.one_fence = o.one_fence;
    return v;
}

std::uint64_t index_in(std::uint64_t x, std::uint64_t n) { return n == 0 ? 0 : x % n; }

// Issues one bench operation on anything with the vector's member functions.
template <class V>
void run_on(V& v, op o, std::uint64_t a, std::uint64_t b, std::uint64_t n) {
    switch (o) {
        case op::push_back: (void)v.push_back(a); break;
        case op::pop_back: (void)v.pop_back(); break;
        case op::get: (void)v.get(index_in(a, n)); break;
        case op::swap: (void)v.swap(index_in(a, n), index_in(b, n)); break;
        default: break;  // not offered: the kinds list what they support
    }
}

template <class Selector>
class combining_vector final : public subject {
    using vec = ferrite::vector<element, heap_type, Selector>;

public:
    explicit combining_vector(const subject_config& cfg)
        : scratch_(cfg.pool_dir),
          v_(vec::create(scratch_.pool(), scratch_.heap(), scratch_.anchor(), 1024, vector_options_of(cfg.options))),
          n_(cfg.initial_size) {
        for (std::uint64_t i = 0; i < cfg.initial_size; ++i) v_.push_back(i);
    }
    void run(unsigned, op o, std::uint64_t a, std::uint64_t b) override { run_on(v_, o, a, b, n_); }
    std::optional<combining::combining_stats> combining_stats() const override { return v_.stats(); }

private:
    scratch_pool scratch_;
    vec v_;
    std::uint64_t n_;
};

// The persistent core driven one operation at a time under a mutex.
class mutex_vector final : public subject {
    using core = c::persistent_vector_core<element, heap_type>;

public:
    explicit mutex_vector(const subject_config& cfg)
        : scratch_(cfg.pool_dir),
          core_(scratch_.pool(), scratch_.heap(), core::create(scratch_.pool(), scratch_.heap(), scratch_.anchor(), 1024),
                vector_options_of(cfg.options)),
          n_(cfg.initial_size) {
        for (std::uint64_t i = 0; i < cfg.initial_size; ++i) apply({c::vector_op::push_back, 0, 0, i});
    }
    void run(unsigned, op o, std::uint64_t a, std::uint64_t b) override {
        switch (o) {
            case op::push_back: apply({c::vector_op::push_back, 0, 0, a}); break;
            case op::pop_back: apply({c::vector_op::pop_back, 0, 0, 0}); break;
            case op::get: apply({c::vector_op::get, index_in(a, n_), 0, 0}); break;
            case op::swap: apply({c::vector_op::swap, index_in(a, n_), index_in(b, n_), 0}); break;
            default: break;
        }
    }

private:
    void apply(const core::request& r) {
        combining::slot<core::request, core::response> s{r, {}};
        combining::slot<core::request, core::response>* one[] = {&s};
        std::lock_guard lock(mutex_);
        core_.combine(std::span(one));
    }
    scratch_pool scratch_;
    std::mutex mutex_;
    core core_;
    std::uint64_t n_;
};

// The combining engine over the DRAM core, with the vector's member-function interface.
template <class Engine>
class volatile_vector final : public subject {
    using core = volatile_vector_core<element>;

public:
    explicit volatile_vector(const subject_config& cfg) : engine_(cfg.options.elimination), n_(cfg.initial_size) {
        for (std::uint64_t i = 0; i < cfg.initial_size; ++i) engine_.apply({c::vector_op::push_back, 0, 0, i});
    }
    void run(unsigned, op o, std::uint64_t a, std::uint64_t b) override {
        switch (o) {
            case op::push_back: engine_.apply({c::vector_op::push_back, 0, 0, a}); break;
            case op::pop_back: engine_.apply({c::vector_op::pop_back, 0, 0, 0}); break;
            case op::get: engine_.apply({c::vector_op::get, index_in(a, n_), 0, 0}); break;
            case op::swap: engine_.apply({c::vector_op::swap, index_in(a, n_), index_in(b, n_), 0}); break;
            default: break;
        }
    }
    std::optional<combining::combining_stats> combining_stats() const override { return engine_.stats(); }

private:
    Engine engine_;
    std::uint64_t n_;
};

template <class Futex, class Spin>
std::unique_ptr<subject> choose(const subject_config& cfg) {
    if (cfg.options.futex_wait) return std::make_unique<Futex>(cfg);
    return std::make_unique<Spin>(cfg);
}

const std::vector<op> vector_ops = {op::push_back, op::pop_back, op::get, op::swap};

}  // namespace

void register_vector_subjects(std::vector<subject_kind>& out) {
    out.push_back({"vector-pfc", "ferrite::vector on PFC (publication list, spin-then-futex)", vector_ops,
                   choose<combining_vector<c::use_pfc>, combining_vector<c::use_pfc_spin>>});
    out.push_back({"vector-fpfc", "ferrite::vector on FPFC (slot per thread)", vector_ops,
                   choose<combining_vector<c::use_fpfc>, combining_vector<c::use_fpfc_spin>>});
    out.push_back({"vector-mutex", "the same persistent vector, one operation at a time under std::mutex", vector_ops,
                   [](const subject_config& cfg) -> std::unique_ptr<subject> { return std::make_unique<mutex_vector>(cfg); }});
    out.push_back({"vector-volatile", "FPFC over a DRAM vector, no persistence (upper bound)", vector_ops,
                   choose<volatile_vector<combining::fpfc<volatile_vector_core<element>>>,
                          volatile_vector<combining::fpfc<volatile_vector_core<element>, sync::pure_spin>>>});
    out.push_back({"vector-volatile-pfc", "PFC over a DRAM vector, no persistence (upper bound of stack-pfc)", vector_ops,
                   choose<volatile_vector<combining::pfc<volatile_vector_core<element>>>,
                          volatile_vector<combining::pfc<volatile_vector_core<element>, sync::pure_spin>>>});
}

}  // namespace ferrite::bench
