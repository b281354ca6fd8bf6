// Test support for the durable tree's unit tests: a 64-byte aligned region in DRAM, its crash
// image (a copy of every byte: the crash that keeps every line's current contents, which
// InCLL must roll back to the last durable epoch), and the tree's contents as a map.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <new>

#include "ferrite/index/durable_tree.hpp"
#include "ferrite/index/incll_layout.hpp"

namespace ferrite::index::testing {

class region {
public:
    explicit region(std::uint64_t bytes)
        : bytes_(bytes), p_(static_cast<std::byte*>(::operator new(bytes, std::align_val_t{64}))) {
        std::memset(p_, 0, bytes);
    }
    ~region() { ::operator delete(p_, std::align_val_t{64}); }
    region(const region&) = delete;
    region& operator=(const region&) = delete;

    std::byte* data() const noexcept { return p_; }
    std::uint64_t bytes() const noexcept { return bytes_; }
    // Only while no writer runs (the copy is one crash image).
    std::unique_ptr<region> crash_image() const {
        auto r = std::make_unique<region>(bytes_);
        std::memcpy(r->p_, p_, bytes_);
        return r;
    }

private:
    std::uint64_t bytes_;
    std::byte* p_;
};

inline incll_options manual_epochs(unsigned shards = 4, unsigned log_entries = 32) {
    incll_options o;
    o.epoch_length = std::chrono::milliseconds(0);
    o.shards = shards;
    o.log_entries = log_entries;
    return o;
}

inline std::map<std::uint64_t, std::uint64_t> contents(const durable_tree& t) {
    std::map<std::uint64_t, std::uint64_t> m;
    t.scan(0, std::numeric_limits<std::size_t>::max(), [&](std::uint64_t k, std::uint64_t v) { m.emplace(k, v); });
    return m;
}

// The region's commit line (line 1, after the geometry: incll_layout.hpp), for tests that
// read or move the durable epoch on the media.
inline incll_layout::commit_line& commit(region& r) {
    return *reinterpret_cast<incll_layout::commit_line*>(r.data() + sizeof(incll_layout::geometry));
}

}  // namespace ferrite::index::testing
