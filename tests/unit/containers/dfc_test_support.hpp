// Helpers for the DFC tests: an aligned region standing in for persistent memory, crafted
// announcements (a thread that announced and has not yet waited), and crash images built
// from a snapshot (the region before a phase) and the region after it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ferrite/combining/dfc_layout.hpp"

namespace ferrite_test {

struct alignas(64) cache_line {
    std::byte b[64];
};

// Zero-filled, 64-byte aligned memory.
class dfc_region_buffer {
public:
    explicit dfc_region_buffer(std::size_t bytes) : lines_((bytes + 63) / 64), bytes_(lines_.size() * 64) {}
    void* data() noexcept { return lines_.data(); }
    std::size_t size() const noexcept { return bytes_; }
    std::vector<cache_line> snapshot() const { return lines_; }
    void restore(const std::vector<cache_line>& s) { lines_ = s; }
    // Restore one region of bytes [offset, offset + n) from a snapshot.
    void restore_range(const std::vector<cache_line>& s, std::size_t offset, std::size_t n) {
        std::memcpy(reinterpret_cast<std::byte*>(lines_.data()) + offset,
                    reinterpret_cast<const std::byte*>(s.data()) + offset, n);
    }
    ferrite::combining::dfc_region layout(unsigned threads) noexcept {
        return ferrite::combining::dfc_region::at(data(), threads);
    }
    std::size_t offset_of(const void* p) const noexcept {
        return static_cast<std::size_t>(static_cast<const std::byte*>(p) -
                                        reinterpret_cast<const std::byte*>(lines_.data()));
    }

private:
    std::vector<cache_line> lines_;
    std::size_t bytes_;
};

// What OP does before it waits (alg. 1-12): thread `tid` announces (name, param) and is
// ready to be collected. With `complete` false the slot's last store, its seq, is missing
// (a crash in the middle of the announcement, before the seq reached the media).
inline void announce_raw(ferrite::combining::dfc_region r, unsigned tid, std::uint64_t name,
                         std::uint64_t param, bool complete = true) {
    using namespace ferrite::combining;
    auto& rec = r.threads[tid];
    const std::uint64_t v = rec.valid.load();
    const unsigned slot = 1 - static_cast<unsigned>(v & 1);
    auto& a = rec.ann[slot];
    a.status = static_cast<std::uint64_t>(dfc_status::bottom);
    a.value = 0;
    a.epoch = r.epoch->epoch.load() + (r.epoch->epoch.load() & 1);
    a.param = param;
    a.name = name;
    if (!complete) return;
    a.seq = rec.ann[v & 1].seq.load() + 1;
    rec.valid = slot | dfc_ready_bit;
}

}  // namespace ferrite_test
