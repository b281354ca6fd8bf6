// clflushopt is asynchronous: without a fence the line may still be in flight at the return.
#include <immintrin.h>

#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t v) {
    r->data = v;  // flow-expect: durability
    _mm_clflushopt(&r->data);
}
