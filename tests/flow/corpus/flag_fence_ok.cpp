// The twin: the shapes of InCLL's write_back_claimed (a counter of claimed chunks) and lazy
// recovery's finish (a bool): each write-back loop writes back the lines other calls dirtied
// (declared with FERRITE_FLOW_STORED_ELSEWHERE) and sets its flag; the fence runs only when
// the flag is non-zero. The path that skips the fence is taken only when no write-back ran:
// no report (the meet alone kept the write-back path's Flush on the skip edge).
#include <cstdint>

#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void finish(node* const* nodes, const bool* changed, int n) noexcept {
    bool wrote = false;
    for (int i = 0; i < n; ++i)
        if (node* const p = nodes[i]; changed[i]) {
            FERRITE_FLOW_STORED_ELSEWHERE(p, sizeof(node));
            ferrite::pmem::pwb(p);
            wrote = true;
        }
    if (wrote) ferrite::pmem::pfence();
}

FERRITE_FLOW_ROOT void write_back_claimed(node* const* dirty, const int* chunk_end, int chunks) noexcept {
    std::uint64_t claimed = 0;
    int from = 0;
    for (int c = 0; c < chunks; ++c) {
        for (int x = from; x < chunk_end[c]; ++x) {
            node* const d = dirty[x];
            FERRITE_FLOW_STORED_ELSEWHERE(d, sizeof(node));
            ferrite::pmem::pwb(d);
        }
        from = chunk_end[c];
        ++claimed;
    }
    if (claimed == 0) return;
    ferrite::pmem::pfence();
}
