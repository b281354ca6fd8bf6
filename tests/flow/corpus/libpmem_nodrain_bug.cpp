// libpmem: pmem_memcpy_nodrain copies and writes back, but the drain is missing.
#include <libpmem.h>

#include "record.hpp"

FERRITE_FLOW_ROOT void copy(record* to, const record* from) {
    pmem_memcpy_nodrain(to, from, sizeof(record));  // flow-expect: durability
}
