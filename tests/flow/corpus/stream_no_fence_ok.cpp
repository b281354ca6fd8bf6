// x86 streaming store, fenced.
#include <immintrin.h>

#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, long long v) {
    _mm_stream_si64(reinterpret_cast<long long*>(&r->data), v);
    _mm_sfence();
}
