// libpmem, missing drain: pmem_flush without pmem_drain.
#include <libpmem.h>

#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t v) {
    r->data = v;  // flow-expect: durability
    pmem_flush(&r->data, sizeof r->data);
}
