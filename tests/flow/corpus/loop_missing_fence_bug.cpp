// A loop that writes back every element but forgets the fence after it.
#include <cstddef>

#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void clear(record* rs, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        rs[i].data = 0;  // flow-expect: durability
        ferrite::pmem::pwb(&rs[i].data);
    }
}
