// libpmem: the copy persisted.
#include <libpmem.h>

#include "record.hpp"

FERRITE_FLOW_ROOT void copy(record* to, const record* from) {
    pmem_memcpy_persist(to, from, sizeof(record));
}
