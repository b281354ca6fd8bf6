// x86 intrinsics, flush of the wrong line, corrected.
#include <immintrin.h>

#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t v) {
    r->tail = v;
    _mm_clflushopt(&r->tail);
    _mm_sfence();
}
