// Two lines of one element behind a variable index (`refs_[tid].intent_index` beside
// `refs_[tid].ref[i]`): the write-back of the second line does not make the first durable.
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
    parts[tid].ref[i] = 0;  // flow-expect: durability
    ferrite::pmem::pwb(&parts[tid].intent_index);
    ferrite::pmem::pfence();
}
