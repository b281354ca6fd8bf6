// The twin: a later loop writes back the stored line of each record the collect loop
// stored. The path that leaves the write-back loop at once is feasible only when the
// collect loop stored nothing (loop correlation), so the data is written back and fenced.
#include <cstddef>

#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void stamp(record* rs, std::size_t n, std::uint64_t v) {
    for (std::size_t i = 0; i < n; ++i) rs[i].data = v;
    for (std::size_t i = 0; i < n; ++i)
        ferrite::pmem::pwb(&rs[i].data);
    ferrite::pmem::pfence();
}
