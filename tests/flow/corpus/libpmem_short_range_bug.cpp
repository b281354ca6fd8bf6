// libpmem, range too short: pmem_persist covers the first field's line only.
#include <libpmem.h>

#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t v) {
    r->data = v;
    r->tail = v;  // flow-expect: durability
    pmem_persist(r, sizeof r->data);
}
