// libpmem, missing drain, corrected.
#include <libpmem.h>

#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t v) {
    r->data = v;
    pmem_flush(&r->data, sizeof r->data);
    pmem_drain();
}
