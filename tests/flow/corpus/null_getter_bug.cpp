// The vector's data() accessor (pool.base() + h->data, or nullptr) with the write-back
// aimed at the header instead of the array: the element's store is never written back.
#include <cstddef>
#include <cstdint>

#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

struct pool_handle {
    std::byte* base() const noexcept;  // defined elsewhere
};

struct array_header {
    std::uint64_t data;
};

struct table {
    pool_handle pool;
    array_header* h;
    static std::uint64_t* array(const pool_handle& p, const array_header* hd) noexcept {
        return hd->data ? reinterpret_cast<std::uint64_t*>(p.base() + hd->data) : nullptr;
    }
    std::uint64_t* data() noexcept { return array(pool, h); }
};

FERRITE_FLOW_ROOT void set(table& t, std::uint64_t i, std::uint64_t v) noexcept {
    t.data()[i] = v;  // flow-expect: durability
    ferrite::pmem::pwb(t.h);
    ferrite::pmem::pfence();
}
