// An atomic exchange on persistent memory, written back and fenced.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT std::uint64_t swap(record* r, std::uint64_t v) {
    const std::uint64_t old = __atomic_exchange_n(&r->data, v, __ATOMIC_ACQ_REL);
    ferrite::pmem::pwb(&r->data);
    ferrite::pmem::pfence();
    return old;
}
