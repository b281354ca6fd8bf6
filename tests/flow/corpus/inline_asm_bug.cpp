// Inline asm, missing fence: a hand-written clwb and no sfence.
#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t v) {
    r->data = v;  // flow-expect: durability
    asm volatile("clwb %0" : "+m"(*reinterpret_cast<volatile char*>(&r->data)));
}
