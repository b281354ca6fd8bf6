// vector_kind.cpp: kind 1, "vector" (see ferrite/containers/vector_kind.hpp), and kind 5,
// "stack", which is stored as a vector (stack.hpp) and so shares its functions.
#include "ferrite/containers/vector_kind.hpp"

#include "ferrite/containers/pfc_kinds.hpp"
#include "ferrite/containers/vector_recovery.hpp"

namespace ferrite::containers {
namespace {

std::vector<std::uint64_t> validate(const pmem::pool_ref& pool, const alloc::buddy_heap& heap,
                                    const alloc::directory_entry& e) {
    // Every header word, and the element shape the entry records (the header's own).
    (void)validate_vector(pool, heap, e.anchor, {e.element_size, e.element_align});
    return vector_owned_blocks(pool, heap, e.anchor);
}

void recover(const pmem::pool_ref& pool, alloc::buddy_heap& heap, const alloc::directory_entry& e) {
    recover_vector(pool, heap, e.anchor);  // validates the header first
}

std::string describe(const pmem::pool_ref& pool, const alloc::buddy_heap& heap, const alloc::directory_entry& e) {
    const auto& h = validate_vector(pool, heap, e.anchor);
    return std::to_string(vector_size(h)) + " elements, capacity " + std::to_string(h.capacity);
}

}  // namespace

const kind_ops vector_kind{named_kind<ferrite::vector<int, alloc::buddy_heap>>::id, "vector", validate, recover,
                           describe};
const kind_ops stack_kind{named_kind<ferrite::stack<int, alloc::buddy_heap>>::id, "stack", validate, recover,
                          describe};

}  // namespace ferrite::containers
