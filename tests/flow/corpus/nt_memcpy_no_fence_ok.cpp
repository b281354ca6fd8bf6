// pmem::nt_memcpy, fenced.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void copy(record* to, const record* from) {
    ferrite::pmem::nt_memcpy(to, from, sizeof(record));
    ferrite::pmem::pfence();
}
