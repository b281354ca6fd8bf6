// memset of a two-line record, both lines written back.
#include <cstring>

#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void clear(record* r) {
    std::memset(r, 0, sizeof(record));
    ferrite::pmem::pwb(r);
    ferrite::pmem::pwb(&r->tail);
    ferrite::pmem::pfence();
}
