// program_image_kind.cpp: kind 10 "program_image" (ferrite/containers/program_image.hpp):
// CpNvm's images, validated, recovered and described without opening them.
#include <cstdio>
#include <string>

#include "ferrite/checkpoint/image_store.hpp"
#include "ferrite/containers/program_image.hpp"

namespace ferrite::containers {
namespace {

std::vector<std::uint64_t> validate(const pmem::pool_ref& pool, const alloc::buddy_heap& heap,
                                    const alloc::directory_entry& e) {
    return checkpoint::image_store::validate(pool, heap, e.anchor);
}

// Replay what committed and was not applied (validating every record first); confirms the
// block if a crash came between the anchor and the confirmation.
void recover(const pmem::pool_ref& pool, alloc::buddy_heap& heap, const alloc::directory_entry& e) {
    auto store = checkpoint::image_store::open(pool, heap, e.anchor);
    store.log().recover();
    checkpoint::image_store::confirm(pool, heap, e.anchor);
}

std::string describe(const pmem::pool_ref& pool, const alloc::buddy_heap& heap, const alloc::directory_entry& e) {
    const auto store = checkpoint::image_store::open(pool, heap, e.anchor);
    const auto& s = store.shape();
    char base[32];
    std::snprintf(base, sizeof base, "0x%llx", static_cast<unsigned long long>(s.base));
    return std::to_string(s.geometry.image_bytes >> 10) + " KiB image at " + base + ", " +
           std::to_string(s.geometry.threads) + " thread logs of " + std::to_string(s.geometry.log_bytes >> 10) +
           " KiB, committed epoch " + std::to_string(store.log().committed_epoch()) + ", applied " +
           std::to_string(store.log().applied_epoch());
}

}  // namespace

const kind_ops program_image_kind{10, "program_image", validate, recover, describe};

}  // namespace ferrite::containers
