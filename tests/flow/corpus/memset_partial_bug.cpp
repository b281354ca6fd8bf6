// memset of a two-line record, only its first line written back.
#include <cstring>

#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void clear(record* r) {
    std::memset(r, 0, sizeof(record));  // flow-expect: durability
    ferrite::pmem::pwb(r);
    ferrite::pmem::pfence();
}
