// libpmem, double flush, corrected.
#include <libpmem.h>

#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t v) {
    r->data = v;
    pmem_persist(&r->data, sizeof r->data);
}
