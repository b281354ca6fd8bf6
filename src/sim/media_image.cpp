// Shadow media image (see ferrite/sim/media_image.hpp).
#include "ferrite/sim/media_image.hpp"

#include <cstring>

namespace ferrite::sim {

media_image::media_image(std::byte* base, std::size_t size)
    : base_(base), size_(size), media_(base, base + size), versions_(size / line_size, 0) {}

bool media_image::contains(const void* p) const noexcept {
    auto a = reinterpret_cast<std::uintptr_t>(p);
    auto b = reinterpret_cast<std::uintptr_t>(base_);
    return a >= b && a - b < size_;
}

std::size_t media_image::line_of(const void* p) const noexcept {
    return (reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(base_)) / line_size;
}

line_snapshot media_image::snapshot(std::size_t line, std::uint64_t mask) noexcept {
    line_snapshot s;
    s.line = line;
    s.version = next_version_++;
    s.mask = mask;
    std::memcpy(s.bytes.data(), base_ + line * line_size, line_size);
    return s;
}

bool media_image::nothing_new(std::size_t line, const line_snapshot* newest_pending) const noexcept {
    const std::byte* now = base_ + line * line_size;
    if (newest_pending && newest_pending->mask == ~0ull && newest_pending->version > versions_[line])
        return std::memcmp(now, newest_pending->bytes.data(), line_size) == 0;
    return std::memcmp(now, media_.data() + line * line_size, line_size) == 0;
}

void media_image::persist(const line_snapshot& s) noexcept {
    if (s.version < versions_[s.line]) return;
    versions_[s.line] = s.version;
    std::byte* dst = media_.data() + s.line * line_size;
    if (s.mask == ~0ull) {
        std::memcpy(dst, s.bytes.data(), line_size);
        return;
    }
    for (std::size_t b = 0; b < line_size; ++b)
        if (s.mask >> b & 1u) dst[b] = s.bytes[b];
}

}  // namespace ferrite::sim
