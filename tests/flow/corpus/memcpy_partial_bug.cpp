// memcpy into persistent memory, written back only in part: the copy spans two lines.
#include <cstring>

#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void copy(record* to, const record& from) {
    std::memcpy(to, &from, sizeof(record));  // flow-expect: durability
    ferrite::pmem::pwb(to);
    ferrite::pmem::pfence();
}
