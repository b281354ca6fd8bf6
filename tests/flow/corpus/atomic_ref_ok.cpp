// A store through std::atomic_ref in a helper; the root writes the stored line back and
// fences.
#include <atomic>

#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

static void store64(std::uint64_t& w, std::uint64_t v) { std::atomic_ref<std::uint64_t>(w).store(v); }

FERRITE_FLOW_ROOT void update(record* r, std::uint64_t v) {
    store64(r->tail, v);
    ferrite::pmem::pwb(&r->tail);
    ferrite::pmem::pfence();
}
