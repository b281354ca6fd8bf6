// deque_kind.cpp: kind 7, "deque", and kind 6, "queue", which is stored as a deque
// (queue.hpp) and so shares its functions (see ferrite/containers/pfc_kinds.hpp).
#include "ferrite/containers/deque_recovery.hpp"
#include "ferrite/containers/pfc_kinds.hpp"

namespace ferrite::containers {
namespace {

std::vector<std::uint64_t> validate(const pmem::pool_ref& pool, const alloc::buddy_heap& heap,
                                    const alloc::directory_entry& e) {
    (void)validate_deque(pool, heap, e.anchor, e.element_size);  // and the entry's element size
    return deque_owned_blocks(pool, heap, e.anchor);
}

void recover(const pmem::pool_ref& pool, alloc::buddy_heap& heap, const alloc::directory_entry& e) {
    recover_deque(pool, heap, e.anchor);  // validates the header first
}

std::string describe(const pmem::pool_ref& pool, const alloc::buddy_heap& heap, const alloc::directory_entry& e) {
    const auto& h = validate_deque(pool, heap, e.anchor);
    return std::to_string(deque_committed(h).size) + " elements, capacity " + std::to_string(h.capacity);
}

}  // namespace

const kind_ops deque_kind{named_kind<ferrite::deque<int, alloc::buddy_heap>>::id, "deque", validate, recover,
                          describe};
const kind_ops queue_kind{named_kind<ferrite::queue<int, alloc::buddy_heap>>::id, "queue", validate, recover,
                          describe};

}  // namespace ferrite::containers
