// A loop that writes back every element, then one fence for all of them.
#include <cstddef>

#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void clear(record* rs, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        rs[i].data = 0;
        ferrite::pmem::pwb(&rs[i].data);
    }
    ferrite::pmem::pfence();
}
