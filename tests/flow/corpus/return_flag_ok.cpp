// The twin: the shapes of the vector's write_back_deferred (returns the condition that
// guarded its write-back) and SOFT's normalise_dead (returns true only on the path that
// wrote back): each helper writes back lines other calls dirtied (declared with
// FERRITE_FLOW_STORED_ELSEWHERE) and says so in its return value; the caller fences only
// when it is non-zero. A zero return means no write-back ran, so the edge that skips the
// fence has nothing to fence: no report (the callee's summary, the meet over its returns,
// kept the write-back's Flush on that edge).
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

bool write_back_deferred(node* p, int from, int to) noexcept {
    const bool any = to > from;
    if (any) {
        FERRITE_FLOW_STORED_ELSEWHERE(p, sizeof(node));
        ferrite::pmem::pwb(p);
    }
    return any;
}

bool normalise(node* p, bool dirty) noexcept {
    if (dirty) {
        FERRITE_FLOW_STORED_ELSEWHERE(p, sizeof(node));
        ferrite::pmem::pwb(p);
        return true;
    }
    return false;
}

FERRITE_FLOW_ROOT void pass(node* p, int from, int to) noexcept {
    if (write_back_deferred(p, from, to)) ferrite::pmem::pfence();
}

FERRITE_FLOW_ROOT void recover(node* p, bool dirty) noexcept {
    if (normalise(p, dirty)) ferrite::pmem::pfence();
}
