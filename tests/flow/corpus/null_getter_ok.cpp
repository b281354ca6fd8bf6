// The twin: the vector's data() -> array(pool_, h_) (persistent_vector_core.hpp), an accessor
// that returns pool.base() + h->data, or nullptr when there is no array. The store goes
// through one call of data(), the write-back through another: one object (data() is a
// getter of the pool's base(), its null return left out), so the write-back covers the store.
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
    t.data()[i] = v;
    ferrite::pmem::pwb(&t.data()[i]);
    ferrite::pmem::pfence();
}
