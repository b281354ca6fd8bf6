// Lazy recovery's finish with a second kind of node: nodes rolled back write back their
// lines and set the flag; nodes repaired write theirs back too, but forget to set it. When
// only repaired nodes were written back, the fence is skipped: the repair is not durable.
// The flag is zero on the paths that took no "wrote = true" edge, and one of them runs the
// second write-back.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void finish(node* const* nodes, const bool* changed, const bool* repaired, int n) noexcept {
    bool wrote = false;
    for (int i = 0; i < n; ++i)
        if (node* const p = nodes[i]; changed[i]) {
            FERRITE_FLOW_STORED_ELSEWHERE(p, sizeof(node));
            ferrite::pmem::pwb(p);
            wrote = true;
        } else if (repaired[i]) {
            p->key = 1;  // flow-expect: durability
            ferrite::pmem::pwb(p);
        }
    if (wrote) ferrite::pmem::pfence();
}
