// The twin: the undo log's commit. A range-for stores each planned word through its
// element's pointer field (`w.word`); a second loop writes back `writes[i].word`, the same
// field of every element, and one fence follows. The two reads are one object for the
// analysis (a pointer field of every element of an array), so the second loop's exit
// covers the first loop's stores (loop correlation): no report.
#include <cstdint>
#include <vector>

#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

struct planned {
    std::uint64_t* word;
    std::uint64_t value;
    std::uint64_t* mirror;
};

FERRITE_FLOW_ROOT void apply(const std::vector<planned>& writes) noexcept {
    for (const auto& w : writes) *w.word = w.value;
    for (std::size_t i = 0; i < writes.size(); ++i) ferrite::pmem::pwb(writes[i].word);
    ferrite::pmem::pfence();
}
