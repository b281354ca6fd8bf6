// dpfc_kinds.cpp: kinds 12 "dpfc_stack" and 13 "dpfc_queue" (see
// ferrite/containers/dpfc_kinds.hpp). Elements are opaque words to validation, recovery and
// description (dpfc_layout.hpp needs no element type), so nothing here is a template of T.
#include "ferrite/containers/dpfc_kinds.hpp"

namespace ferrite::containers {
namespace {

template <std::uint64_t Magic>
std::vector<std::uint64_t> validate(const pmem::pool_ref& pool, const alloc::buddy_heap& heap,
                                    const alloc::directory_entry& e) {
    const auto span = dpfc_region_at(pool, heap, e.anchor, Magic);
    dpfc_validate(span.region, span.bytes, Magic);
    return {e.anchor};  // the region is the structure's only block
}

// Confirm the block (a crash may have come between the anchor and the confirmation), then
// recover the region (validated first: nothing is written to a damaged one).
template <std::uint64_t Magic>
void recover(const pmem::pool_ref& pool, alloc::buddy_heap& heap, const alloc::directory_entry& e) {
    const auto span = dpfc_region_at(pool, heap, e.anchor, Magic);
    dpfc_validate(span.region, span.bytes, Magic);
    heap.confirm_allocation(const_cast<void*>(span.region));
    dpfc_recover(const_cast<void*>(span.region));
}

template <std::uint64_t Magic>
std::string describe(const pmem::pool_ref& pool, const alloc::buddy_heap& heap, const alloc::directory_entry& e) {
    const auto span = dpfc_region_at(pool, heap, e.anchor, Magic);
    const auto* h = static_cast<const dpfc_header*>(span.region);
    const auto r = dpfc_region::at(const_cast<void*>(span.region), h->threads);
    std::string s = std::to_string(r.committed().size());
    s.append(" elements, capacity ").append(std::to_string(h->capacity));
    s.append(", ").append(std::to_string(h->threads)).append(" thread ids");
    return s;
}

template <std::uint64_t Magic>
constexpr kind_ops ops(std::uint32_t id, std::string_view name) {
    return {id, name, validate<Magic>, recover<Magic>, describe<Magic>};
}

}  // namespace

const kind_ops dpfc_stack_kind = ops<dpfc_stack_magic>(named_kind<dpfc_stack<std::uint64_t>>::id, "dpfc_stack");
const kind_ops dpfc_queue_kind = ops<dpfc_queue_magic>(named_kind<dpfc_queue<std::uint64_t>>::id, "dpfc_queue");

}  // namespace ferrite::containers
