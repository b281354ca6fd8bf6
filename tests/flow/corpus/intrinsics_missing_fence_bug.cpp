// x86 intrinsics, missing fence: clwb without sfence.
#include <immintrin.h>

#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t v) {
    r->data = v;  // flow-expect: durability
    _mm_clwb(&r->data);
}
