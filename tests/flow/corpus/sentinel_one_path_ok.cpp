// The thesis's pair example, corrected: the data is persisted on every path.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void fill(entry* e, std::uint64_t v, bool careful) {
    e->data = v;
    if (careful) e->data = v + 1;
    ferrite::pmem::pwb(&e->data);
    ferrite::pmem::pfence();
    e->valid = 1;
    ferrite::pmem::pwb(&e->valid);
    ferrite::pmem::pfence();
}
