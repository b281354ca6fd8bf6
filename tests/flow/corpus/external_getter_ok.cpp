// The twin: the caller fences the ring the helper wrote back (at pool.base() plus an
// offset, base() read as a pseudo-field of the pool) before it stores the record's epoch.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

struct pool_handle {
    std::byte* base() const noexcept;  // defined elsewhere
};

struct ring_header {
    std::uint64_t data;
    alignas(64) std::uint64_t epoch FERRITE_FLOW_SENTINEL;
};

void store_ring(const pool_handle& pool, const ring_header* h, const std::byte* src, std::size_t bytes) noexcept {
    auto* ring = pool.base() + h->data;
    std::memcpy(ring, src, bytes);
    ferrite::pmem::pwb_range(ring, bytes);
}

FERRITE_FLOW_ROOT void replay(const pool_handle& pool, ring_header* h, const std::byte* values, std::size_t bytes) noexcept {
    store_ring(pool, h, values, bytes);
    ferrite::pmem::pfence();
    h->epoch = h->epoch + 1;
    ferrite::pmem::pwb(&h->epoch);
    ferrite::pmem::pfence();
}
