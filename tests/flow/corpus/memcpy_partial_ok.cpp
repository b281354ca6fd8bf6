// memcpy into persistent memory, corrected: every line of the copy.
#include <cstring>

#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void copy(record* to, const record& from) {
    std::memcpy(to, &from, sizeof(record));
    ferrite::pmem::pwb_range(to, sizeof(record));
    ferrite::pmem::pfence();
}
