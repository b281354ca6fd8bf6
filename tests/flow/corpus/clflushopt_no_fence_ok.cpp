// clflush is ordered with later stores (the paper's synchronous flush): no fence needed.
#include <immintrin.h>

#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t v) {
    r->data = v;
    _mm_clflush(&r->data);
}
