// Pool header helpers: checksum and printable fields (see ferrite/pmem/pool_header.hpp).
#include "ferrite/pmem/pool_header.hpp"

#include <cstdio>
#include <cstring>

namespace ferrite::pmem {

std::uint64_t identity_checksum(const pool_identity& id) noexcept {
    const auto* bytes = reinterpret_cast<const unsigned char*>(&id);
    std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64 offset basis
    for (std::size_t i = 0; i < offsetof(pool_identity, checksum); ++i) {
        h ^= bytes[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

std::string_view pool_identity::layout_name() const noexcept {
    return {layout.data(), strnlen(layout.data(), layout.size())};
}

std::string pool_identity::uuid_string() const {
    char out[37];
    std::snprintf(out, sizeof out,
                  "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                  uuid[0], uuid[1], uuid[2], uuid[3], uuid[4], uuid[5], uuid[6], uuid[7], uuid[8],
                  uuid[9], uuid[10], uuid[11], uuid[12], uuid[13], uuid[14], uuid[15]);
    return out;
}

}  // namespace ferrite::pmem
