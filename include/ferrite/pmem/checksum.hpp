// ferrite/pmem/checksum.hpp: FNV-1a 64, the checksum of ferrite's on-media identity blocks
// (pool header, node store, checkpoint log and image headers): a few dozen bytes written
// once, checked at every open, where a fast hash of large data is not needed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ferrite::pmem {

inline std::uint64_t fnv1a64(const void* p, std::size_t n, std::uint64_t h = 0xcbf29ce484222325ull) noexcept {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

}  // namespace ferrite::pmem
