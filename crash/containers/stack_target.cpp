// crash/containers/stack_target.cpp: crash targets stack-pfc and stack-fpfc.
//
// Workload: each thread runs a seeded mix of push (unique values), pop, top and size on a
// ferrite::stack that starts with capacity 2 (growth all the time), in a pool whose heap is
// a ferrite::alloc::buddy_heap. The stack runs on the vector core, so its trace entries and
// its specification are the vector's (vector_model.hpp: top is traced as get(size - 1));
// trace, recovery and checker are those of every container target (container_target.hpp).
#include "ferrite/containers/stack.hpp"
#include "targets.hpp"
#include "vector_model.hpp"

namespace ferrite::crash {
namespace {

using namespace container_check;

template <class Selector>
struct stack_spec {
    using entry = vector_entry;
    using model = vector_model;
    using structure = ferrite::stack<element_type, heap_type, Selector, recording_trace<entry>>;
    static constexpr const char* name = "stack";

    static structure create(pmem::pool& p, heap_type& h, std::uint64_t& anchor, recording_trace<entry> t) {
        return structure::create(p, h, anchor, 2, {}, t);
    }
    static structure open(pmem::pool& p, heap_type& h, std::uint64_t anchor, recording_trace<entry> t = {}) {
        return structure::open(p, h, anchor, {}, t);
    }
    static void push(structure& s, element_type v) { (void)s.push(v); }
    static void pop(structure& s) { (void)s.pop(); }
    static std::uint64_t capacity(pmem::pool& image, std::uint64_t anchor) { return vector_capacity(image, anchor); }
    static std::vector<element_type> contents(const structure& s) {
        const auto view = s.unsynchronized_view();
        return {view.begin(), view.end()};
    }
    static std::vector<const std::byte*> blocks(pmem::pool& image, std::uint64_t anchor) {
        return vector_blocks(image, anchor);
    }

    static void run_op(structure& s, unsigned tid, std::uint64_t i, std::uint64_t r) {
        switch (r % 10) {
            case 0: case 1: case 2: case 3: case 4: (void)s.push(unique_value(tid, i)); break;
            case 5: case 6: case 7: (void)s.pop(); break;
            case 8: (void)s.top(); break;
            default: (void)s.size(); break;
        }
    }
};

}  // namespace

// Mutation scope: the containers' code. The heap's sites are answered for by `alloc` and
// `vector-*`: with only pushes and pops, one heap undo-log fence (undo_log.cpp:110) needs
// about 10,000 crash points per site here to be killed, beyond the CI budget of 2,000.
void register_stack_targets(sim::target_registry& r) {
    r.add(make_target<stack_spec<containers::use_pfc>>(
        "stack-pfc", "ferrite::stack on PFC (vector core): push/pop/top/size from capacity 2, buddy heap",
        {"include/ferrite/containers/"}));
    r.add(make_target<stack_spec<containers::use_fpfc>>(
        "stack-fpfc", "ferrite::stack on FPFC (vector core): push/pop/top/size from capacity 2, buddy heap",
        {"include/ferrite/containers/"}));
}

}  // namespace ferrite::crash
