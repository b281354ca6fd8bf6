// dfc_kinds.cpp: kinds 2-4, "dfc_stack", "dfc_queue", "dfc_deque" (see
// ferrite/containers/dfc_kinds.hpp). Elements are opaque words to validation and recovery,
// so every function runs on the u64 instance of its structure.
#include "ferrite/containers/dfc_kinds.hpp"

namespace ferrite::containers {

void check_dfc_arguments(std::string_view name, unsigned threads, std::uint64_t nodes) {
    if (threads == 0 || nodes == 0)
        throw usage_error("catalog: '" + std::string(name) +
                          "': a DFC structure needs at least one thread id and one node");
}

void check_dfc_threads(std::string_view name, std::uint64_t created, unsigned asked) {
    if (asked <= created) return;
    throw usage_error("catalog: '" + std::string(name) + "' was created for " + std::to_string(created) +
                      " thread ids (0.." + std::to_string(created - 1) + "); " + std::to_string(asked) +
                      " were asked for. A DFC structure's thread count is fixed at create: open it with at most " +
                      std::to_string(created) + ", or give the larger count to a new name");
}

namespace {

template <class C>
std::vector<std::uint64_t> validate(const pmem::pool_ref& pool, const alloc::buddy_heap& heap,
                                    const alloc::directory_entry& e) {
    return dfc_owned_blocks<C>(pool, heap, e.anchor);  // validates the whole structure first
}

// Confirm the block (a crash may have come between the anchor and the confirmation), then
// open the structure, which runs its recovery.
template <class C>
void recover(const pmem::pool_ref& pool, alloc::buddy_heap& heap, const alloc::directory_entry& e) {
    const auto span = dfc_region_at<C>(pool, heap, e.anchor);
    void* region = const_cast<void*>(span.region);
    heap.confirm_allocation(region);
    combining::dfc_options o;
    o.grow_from = &heap;
    o.in_pool = pool;  // (set, GCC 12's TSan build also stops taking the empty optional for uninitialised)
    (void)C::open(region, span.bytes, std::move(o));
}

template <class C>
std::string describe(const pmem::pool_ref& pool, const alloc::buddy_heap& heap, const alloc::directory_entry& e) {
    const auto span = dfc_region_at<C>(pool, heap, e.anchor);
    return std::to_string(static_cast<const combining::dfc_header*>(span.region)->threads) + " thread ids, " +
           std::to_string(span.bytes) + "-byte region";
}

template <class C>
constexpr kind_ops ops(std::string_view name) {
    return {named_kind<C>::id, name, validate<C>, recover<C>, describe<C>};
}

}  // namespace

const kind_ops dfc_stack_kind = ops<dfc_stack<std::uint64_t>>("dfc_stack");
const kind_ops dfc_queue_kind = ops<dfc_queue<std::uint64_t>>("dfc_queue");
const kind_ops dfc_deque_kind = ops<dfc_deque<std::uint64_t>>("dfc_deque");

}  // namespace ferrite::containers
