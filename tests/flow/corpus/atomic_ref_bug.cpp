// A store through std::atomic_ref in a helper (its constructor binds the reference, its
// store() writes through the bound pointer: an access path into the caller's stack); the
// root fences but never writes the record back.
#include <atomic>

#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

static void store64(std::uint64_t& w, std::uint64_t v) { std::atomic_ref<std::uint64_t>(w).store(v); }

FERRITE_FLOW_ROOT void update(record* r, std::uint64_t v) {
    store64(r->tail, v);  // flow-expect: durability
    ferrite::pmem::pfence();
}
