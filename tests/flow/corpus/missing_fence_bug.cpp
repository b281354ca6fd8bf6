// Missing fence: written back, but the function returns before any fence.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t v) {
    r->data = v;  // flow-expect: durability
    ferrite::pmem::pwb(&r->data);
}
