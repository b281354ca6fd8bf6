// Missing flush: the store is fenced but never written back (ferrite's primitives).
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t v) {
    r->data = v;  // flow-expect: durability
    ferrite::pmem::pfence();
}
