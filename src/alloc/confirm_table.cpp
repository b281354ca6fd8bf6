// Durable single-word slot stores of the confirm protocol (see ferrite/alloc/confirm_table.hpp).
#include "ferrite/alloc/confirm_table.hpp"

#include "ferrite/pmem/primitives.hpp"
#include "ferrite/pmem/flow.hpp"

namespace ferrite::alloc {

FERRITE_FLOW_ROOT void confirm_table::store(std::uint64_t i, std::uint64_t value) noexcept {
    slots_[i] = value;  // LP: one aligned 8-byte store
    pmem::pwb(&slots_[i]);
    pmem::pfence();  // PP: durable before the caller goes on (it persists or drops its
                     // own reference next, which must not reach the media first)
}

}  // namespace ferrite::alloc
