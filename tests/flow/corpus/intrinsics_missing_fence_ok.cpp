// x86 intrinsics, missing fence, corrected.
#include <immintrin.h>

#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t v) {
    r->data = v;
    _mm_clwb(&r->data);
    _mm_sfence();
}
