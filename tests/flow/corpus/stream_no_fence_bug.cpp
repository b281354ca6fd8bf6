// x86 streaming store without sfence.
#include <immintrin.h>

#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, long long v) {
    _mm_stream_si64(reinterpret_cast<long long*>(&r->data), v);  // flow-expect: durability
}
