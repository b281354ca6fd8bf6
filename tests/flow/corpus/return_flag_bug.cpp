// A normalise whose second path (a repaired node) writes its line back too, but returns
// false: the caller skips the fence, and the repair is not durable when recovery returns.
// The zero return's summary still holds that write-back.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

bool normalise(node* p, bool dirty, bool repaired) noexcept {
    if (dirty) {
        FERRITE_FLOW_STORED_ELSEWHERE(p, sizeof(node));
        ferrite::pmem::pwb(p);
        return true;
    }
    if (repaired) {
        p->key = 1;
        ferrite::pmem::pwb(p);
    }
    return false;
}

FERRITE_FLOW_ROOT void recover(node* p, bool dirty, bool repaired) noexcept {
    if (normalise(p, dirty, repaired)) ferrite::pmem::pfence();  // flow-expect: durability
}
