// bench/containers/pfc_subjects.cpp: ferrite's stack, queue and deque as `ferrite bench`
// subjects, each on PFC, on FPFC, and under a mutex (the thesis's "Mutex" baseline: the same
// persistent core, each operation a batch of one under a std::mutex):
//
//   stack-pfc  stack-fpfc  stack-mutex    ferrite::stack (vector core): push_back / pop_back
//   queue-pfc  queue-fpfc  queue-mutex    ferrite::queue (deque core): push_back / pop_front
//   deque-pfc  deque-fpfc  deque-mutex    ferrite::deque (ring buffer): all four ends
//
// Ablations (--ablation): no-nt = plain stores + pwb instead of NT stores; no-futex = the
// engines' pure-spin waiting; no-elimination; two-fence = pushes with a fence between the values
// and the state record (the stack's, queue's and deque's protocol before format 2, for comparison
// in one run); no-sticky = PFC without the sticky combiner (sync::not_sticky; with two-fence,
// `two-fence-no-sticky`, PFC as it was before issue 23). Pools: scratch_pool.hpp. Structures start with
// capacity 1024 and hold the workload's initial size before timing.
#include <mutex>
#include <type_traits>
#include <span>

#include "bench/containers/pfc_subjects.hpp"
#include "bench/containers/scratch_pool.hpp"
#include "ferrite/containers/deque.hpp"
#include "ferrite/containers/queue.hpp"
#include "ferrite/containers/stack.hpp"

namespace ferrite::bench {
namespace {

using element = std::uint64_t;
using heap_type = alloc::buddy_heap;
namespace c = containers;

constexpr std::size_t initial_capacity = 1024;

template <class Options>
Options options_of(const subject_options& o) {
    Options v;
    v.nt_stores = o.nt_stores;
    v.elimination = o.elimination;
    v.one_fence = o.one_fence;  // the vector core's (stack) and the deque core's (queue, deque)
    return v;
}

// The bench vocabulary on each structure's interface (the kinds list what they support).
template <class T> struct ops_of;
template <class Sel> struct ops_of<ferrite::stack<element, heap_type, Sel>> {
    static void run(auto& s, op o, element a) {
        if (o == op::push_back) (void)s.push(a);
        else if (o == op::pop_back) (void)s.pop();
    }
};
template <class Sel> struct ops_of<ferrite::queue<element, heap_type, Sel>> {
    static void run(auto& q, op o, element a) {
        if (o == op::push_back) (void)q.push(a);
        else if (o == op::pop_front) (void)q.pop();
    }
};
template <class Sel> struct ops_of<ferrite::deque<element, heap_type, Sel>> {
    static void run(auto& d, op o, element a) {
        switch (o) {
            case op::push_back: (void)d.push_back(a); break;
            case op::pop_back: (void)d.pop_back(); break;
            case op::push_front: (void)d.push_front(a); break;
            case op::pop_front: (void)d.pop_front(); break;
            default: break;
        }
    }
};

// A structure on a combining engine.
template <class S, class Options>
class combining_subject final : public subject {
public:
    explicit combining_subject(const subject_config& cfg)
        : scratch_(cfg.pool_dir),
          s_(S::create(scratch_.pool(), scratch_.heap(), scratch_.anchor(), initial_capacity,
                       options_of<Options>(cfg.options))) {
        for (std::uint64_t i = 0; i < cfg.initial_size; ++i) ops_of<S>::run(s_, op::push_back, i);
    }
    void run(unsigned, op o, std::uint64_t a, std::uint64_t) override { ops_of<S>::run(s_, o, a); }
    std::optional<combining::combining_stats> combining_stats() const override { return s_.stats(); }

private:
    scratch_pool scratch_;
    S s_;
};

// The persistent core driven one operation at a time under a mutex. ToRequest maps a bench
// operation to the core's request.
template <class Core, class Options, auto ToRequest>
class mutex_subject final : public subject {
public:
    explicit mutex_subject(const subject_config& cfg)
        : scratch_(cfg.pool_dir),
          core_(scratch_.pool(), scratch_.heap(),
                Core::create(scratch_.pool(), scratch_.heap(), scratch_.anchor(), initial_capacity),
                options_of<Options>(cfg.options)) {
        for (std::uint64_t i = 0; i < cfg.initial_size; ++i) run(0, op::push_back, i, 0);
    }
    void run(unsigned, op o, std::uint64_t a, std::uint64_t) override {
        typename Core::slot_type s{ToRequest(o, a), {}};
        typename Core::slot_type* one[] = {&s};
        std::lock_guard lock(mutex_);
        core_.combine(std::span(one));
    }

private:
    scratch_pool scratch_;
    std::mutex mutex_;
    Core core_;
};

c::vector_request<element> stack_request(op o, element a) {
    return {o == op::push_back ? c::vector_op::push_back : c::vector_op::pop_back, 0, 0, a};
}
c::deque_request<element> deque_request(op o, element a) {
    switch (o) {
        case op::push_back: return {c::deque_op::push_back, a, 0};
        case op::pop_back: return {c::deque_op::pop_back, 0, 0};
        case op::push_front: return {c::deque_op::push_front, a, 0};
        default: return {c::deque_op::pop_front, 0, 0};
    }
}

// NotSticky is void for engines without a sticky combiner (FPFC): the ablation changes nothing there.
template <class Futex, class Spin, class NotSticky>
std::unique_ptr<subject> choose(const subject_config& cfg) {
    if (!cfg.options.futex_wait) return std::make_unique<Spin>(cfg);
    if constexpr (!std::is_void_v<NotSticky>) {
        if (!cfg.options.sticky) return std::make_unique<NotSticky>(cfg);
    }
    return std::make_unique<Futex>(cfg);
}

template <template <class, class, class, class> class S, class Sel, class SpinSel, class NotStickySel, class Options>
subject_kind combining_kind(std::string name, std::string summary, std::vector<op> supports) {
    using futex = combining_subject<S<element, heap_type, Sel, c::no_trace>, Options>;
    using spin = combining_subject<S<element, heap_type, SpinSel, c::no_trace>, Options>;
    using not_sticky = std::conditional_t<std::is_void_v<NotStickySel>, void,
                                          combining_subject<S<element, heap_type, NotStickySel, c::no_trace>, Options>>;
    return {std::move(name), std::move(summary), std::move(supports), choose<futex, spin, not_sticky>};
}

template <class Subject>
std::unique_ptr<subject> make(const subject_config& cfg) {
    return std::make_unique<Subject>(cfg);
}

const std::vector<op> stack_ops = {op::push_back, op::pop_back};
const std::vector<op> queue_ops = {op::push_back, op::pop_front};
const std::vector<op> deque_ops = {op::push_back, op::pop_back, op::push_front, op::pop_front};

}  // namespace

void register_pfc_subjects(std::vector<subject_kind>& out) {
    using vopts = c::vector_options;
    using dopts = c::deque_options;
    using stack_core = c::stack_core<element, heap_type>;
    using deque_core = c::persistent_deque_core<element, heap_type>;
    out.push_back(combining_kind<ferrite::stack, c::use_pfc, c::use_pfc_spin, c::use_pfc_not_sticky, vopts>(
        "stack-pfc", "ferrite::stack on PFC (vector core; publication list, spin-then-futex)", stack_ops));
    out.push_back(combining_kind<ferrite::stack, c::use_fpfc, c::use_fpfc_spin, void, vopts>(
        "stack-fpfc", "ferrite::stack on FPFC (vector core; slot per thread)", stack_ops));
    out.push_back({"stack-mutex", "the same persistent stack, one operation at a time under std::mutex", stack_ops,
                   make<mutex_subject<stack_core, vopts, stack_request>>});
    out.push_back(combining_kind<ferrite::queue, c::use_pfc, c::use_pfc_spin, c::use_pfc_not_sticky, dopts>(
        "queue-pfc", "ferrite::queue on PFC (ring-buffer deque core)", queue_ops));
    out.push_back(combining_kind<ferrite::queue, c::use_fpfc, c::use_fpfc_spin, void, dopts>(
        "queue-fpfc", "ferrite::queue on FPFC (ring-buffer deque core)", queue_ops));
    out.push_back({"queue-mutex", "the same persistent queue, one operation at a time under std::mutex", queue_ops,
                   make<mutex_subject<deque_core, dopts, deque_request>>});
    out.push_back(combining_kind<ferrite::deque, c::use_pfc, c::use_pfc_spin, c::use_pfc_not_sticky, dopts>(
        "deque-pfc", "ferrite::deque on PFC (persistent ring buffer)", deque_ops));
    out.push_back(combining_kind<ferrite::deque, c::use_fpfc, c::use_fpfc_spin, void, dopts>(
        "deque-fpfc", "ferrite::deque on FPFC (persistent ring buffer)", deque_ops));
    out.push_back({"deque-mutex", "the same persistent deque, one operation at a time under std::mutex", deque_ops,
                   make<mutex_subject<deque_core, dopts, deque_request>>});
}

}  // namespace ferrite::bench
