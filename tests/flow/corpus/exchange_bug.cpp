// An atomic exchange on persistent memory, never written back.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT std::uint64_t swap(record* r, std::uint64_t v) {
    const std::uint64_t old = __atomic_exchange_n(&r->data, v, __ATOMIC_ACQ_REL);  // flow-expect: durability
    ferrite::pmem::pfence();
    return old;
}
