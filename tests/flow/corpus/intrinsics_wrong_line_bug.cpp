// x86 intrinsics, flush of the wrong line: clflushopt of line 0 after a store to line 1.
#include <immintrin.h>

#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t v) {
    r->tail = v;  // flow-expect: durability
    _mm_clflushopt(&r->data);
    _mm_sfence();
}
