// crash/checkpoint/image_history.hpp: what the CpNvm crash targets check a recovered pool
// against. The image's before_commit hook (run by the last thread of each checkpoint, while
// no thread writes the image) keeps a copy of the whole volatile image per epoch: the program
// state that epoch commits. After a crash, the persistent image must equal, byte for byte,
// the copy of the committed epoch: a write that was not marked leaves it behind the copy, a
// torn or partly applied epoch differs from every copy.
//
// Also the recovery both targets run on the simulator's pool: the heap's, then the image's
// (image_store::open, epoch_log::recover: validation, replay), the block confirmed, the
// heap's finish_recovery().
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/checkpoint/image_store.hpp"

namespace ferrite::crash::checkpoint_targets {

class image_history {
public:
    void keep(std::uint64_t epoch, std::span<const std::byte> whole) {
        std::lock_guard g(mutex_);
        if (copies_.size() <= epoch) copies_.resize(epoch + 1);
        copies_[epoch].assign(whole.begin(), whole.end());
    }

    // "" when the persistent image of `log` equals the copy of epoch `c`, except in
    // [skip_from, skip_to) (bytes that are not program state); else what differs.
    std::string compare(const checkpoint::epoch_log& log, std::uint64_t c, std::uint64_t skip_from = 0,
                        std::uint64_t skip_to = 0) const {
        std::lock_guard g(mutex_);
        if (c >= copies_.size() || copies_[c].empty())
            return "no copy of the volatile image was kept for epoch " + std::to_string(c);
        const auto& want = copies_[c];
        const auto bytes = std::min<std::uint64_t>(want.size(), log.geometry().image_bytes);
        for (std::uint64_t at = 0; at < bytes; ++at)
            if (want[at] != log.image()[at] && !(at >= skip_from && at < skip_to))
                return "persistent image byte " + std::to_string(at) + " (" + std::to_string(int(log.image()[at])) +
                       ") differs from the volatile image at the end of epoch " + std::to_string(c) + " (" +
                       std::to_string(int(want[at])) + ")";
        return {};
    }

private:
    mutable std::mutex mutex_;
    std::vector<std::vector<std::byte>> copies_;  // the volatile image at the end of each epoch
};

// Opens the recovered pool's image store and, once it has checked that recovery applied the
// committed epoch c, returns check(log, c): the first problem, or "".
template <class Check>
std::string check_recovered_log(pmem::pool& image, std::uint64_t heap_offset, std::uint64_t image_anchor,
                                Check&& check) {
    alloc::buddy_heap heap = alloc::buddy_heap::open(image, heap_offset);
    const auto store = checkpoint::image_store::open(image, heap, image_anchor);
    const auto& log = store.log();
    const std::uint64_t c = log.committed_epoch();
    if (log.applied_epoch() != c)
        return "after recovery the applied epoch " + std::to_string(log.applied_epoch()) + " differs from the committed " +
               std::to_string(c);
    return check(log, c);
}

inline void recover_image_pool(pmem::pool& image, std::uint64_t heap_offset, std::uint64_t image_anchor) {
    alloc::buddy_heap heap = alloc::buddy_heap::open(image, heap_offset);
    heap.recover();
    checkpoint::image_store::open(image, heap, image_anchor).log().recover();
    checkpoint::image_store::confirm(image, heap, image_anchor);
    heap.finish_recovery();
}

}  // namespace ferrite::crash::checkpoint_targets
