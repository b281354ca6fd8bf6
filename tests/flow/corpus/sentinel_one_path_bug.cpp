// The thesis's own pair example (Figure 5.9): the data is persisted on one path only, and
// the flag is set after the paths meet.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void fill(entry* e, std::uint64_t v, bool careful) {
    e->data = v;  // flow-expect: durability (not written back on the other path)
    if (careful) {
        ferrite::pmem::pwb(&e->data);
        ferrite::pmem::pfence();
    }
    e->valid = 1;  // flow-expect: pair
    ferrite::pmem::pwb(&e->valid);
    ferrite::pmem::pfence();
}
