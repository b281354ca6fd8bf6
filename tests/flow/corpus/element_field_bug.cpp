// The undo log's commit with the wrong field written back: the range-for stores through
// each element's `word`, the second loop writes back `writes[i].mirror`, another pointer
// field of the same elements. The planned words are never written back.
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
    for (const auto& w : writes) *w.word = w.value;  // flow-expect: durability
    for (std::size_t i = 0; i < writes.size(); ++i) ferrite::pmem::pwb(writes[i].mirror);
    ferrite::pmem::pfence();
}
