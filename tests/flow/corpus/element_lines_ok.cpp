// The twin: each line of the element written back where it is stored (the variable index
// into `ref` stays inside its line: the element's line 0).
#include <cstdint>

#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

struct alignas(64) thread_part {
    std::uint64_t ref[4];                    // line 0
    alignas(64) std::uint64_t intent_index;  // line 1
};

FERRITE_FLOW_ROOT void drop(thread_part* parts, unsigned tid, unsigned i) {
    parts[tid].intent_index = i + 1;
    ferrite::pmem::pwb(&parts[tid].intent_index);
    ferrite::pmem::pfence();
    parts[tid].ref[i] = 0;
    ferrite::pmem::pwb(&parts[tid].ref[i]);
    ferrite::pmem::pfence();
}
