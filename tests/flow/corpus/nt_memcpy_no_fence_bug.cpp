// pmem::nt_memcpy without the fence it needs.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void copy(record* to, const record* from) {
    ferrite::pmem::nt_memcpy(to, from, sizeof(record));  // flow-expect: durability
}
