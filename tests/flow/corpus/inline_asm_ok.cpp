// Inline asm, missing fence, corrected.
#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t v) {
    r->data = v;
    asm volatile("clwb %0" : "+m"(*reinterpret_cast<volatile char*>(&r->data)));
    asm volatile("sfence" ::: "memory");
}
