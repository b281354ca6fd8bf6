// A collect loop stores the records' data; a later loop writes back each record it
// collected, but the wrong line of it (the tail). The data never reaches the media.
#include <cstddef>

#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void stamp(record* rs, std::size_t n, std::uint64_t v) {
    for (std::size_t i = 0; i < n; ++i) rs[i].data = v;  // flow-expect: durability
    for (std::size_t i = 0; i < n; ++i)
        ferrite::pmem::pwb(&rs[i].tail);
    ferrite::pmem::pfence();
}
