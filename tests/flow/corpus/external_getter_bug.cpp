// The deque recovery's shape: a helper copies values into a ring it finds at pool.base()
// plus an offset (base() defined in another unit), writes them back and leaves the fence to
// its caller; the caller then stores the record's epoch, a sentinel, without that fence.
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
    h->epoch = h->epoch + 1;  // flow-expect: pair
    ferrite::pmem::pwb(&h->epoch);
    ferrite::pmem::pfence();
}
