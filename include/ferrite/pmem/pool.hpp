// ferrite/pmem/pool.hpp: a pool file mapped into memory with libpmem2.
//
// A pool is one file (see pool_header.hpp for its format) mapped with PMDK's libpmem2, which
// also tells the persistence granularity: byte (eADR), cache line (DAX + MAP_SYNC, ADR) or
// page (an ordinary file, e.g. on tmpfs: durability would need msync, which tmpfs ignores).
// Everything stored in a pool refers to other pool data through offsets (offset_ptr.hpp),
// so the mapping address may differ on every open.
//
//   auto p = ferrite::pmem::pool::create("orders", "orders-v1", 64 << 20);
//   auto& r = p.root<my_root>();        // zero-filled on first call, same object on reopen
//   r.count = 42; ferrite::pmem::pwb(&r.count); ferrite::pmem::pfence();
//
// Rules that keep data safe:
//   * create never overwrites: the file is built under a temporary name and linked into
//     place only when its header is complete and synced.
//   * open validates the whole header before mapping and takes an exclusive flock(2);
//     every failure throws pool_error with a kind() and a message that says what to do,
//     and leaves the file untouched (it is opened read-only until validation passes).
//   * the clean-shutdown flag is cleared at open and set at close(); it tells whether the
//     previous user crashed.
// Crash consistency of the root: see pool_header.hpp (root_offset is the commit point).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <type_traits>

#include "ferrite/error.hpp"
#include "ferrite/pmem/pool_header.hpp"

namespace ferrite::pmem {

// Persistence granularity of a mapping, as libpmem2 reports it.
enum class granularity : std::uint8_t { byte, cache_line, page };
std::string_view to_string(granularity) noexcept;

class pool {
public:
    // Create a new pool file of `size` bytes (rounded up to 4 KiB) and open it.
    // `path` is resolved with resolve_pool_path().
    static pool create(const std::filesystem::path& path, std::string_view layout,
                       std::uint64_t size);
    // Open an existing pool read-write; its layout must equal `layout`.
    static pool open(const std::filesystem::path& path, std::string_view layout);
    // Open read-only with a shared lock, any layout (for `ferrite pool info/check`).
    static pool inspect(const std::filesystem::path& path);

    pool(pool&&) noexcept;
    pool& operator=(pool&&) noexcept;
    pool(const pool&) = delete;
    pool& operator=(const pool&) = delete;
    ~pool();  // close()

    // Mark the clean-shutdown flag (read-write pools), unmap, unlock. Idempotent.
    void close() noexcept;
    bool is_open() const noexcept { return base_ != nullptr; }

    // The root object: zero-filled on the first call, the same bytes on every later open.
    // T must be trivially destructible and standard-layout (it lives in the file).
    template <class T>
    T& root() {
        static_assert(std::is_trivially_destructible_v<T> && std::is_standard_layout_v<T>,
                      "pool roots live in a file: use a standard-layout, trivially "
                      "destructible type (offset_ptr instead of raw pointers)");
        return *static_cast<T*>(root_bytes(sizeof(T), alignof(T)));
    }
    // Root of size `bytes` (alignment up to 64). Throws pool_error(root_mismatch) if a root
    // of another size exists, pool_error(out_of_space) if it does not fit.
    void* root_bytes(std::size_t bytes, std::size_t alignment = 64);

    // The pool's heap: the offset alloc::buddy_heap::create registered (0 = none), so that
    // `ferrite pool info/check` and programs can find it. register_heap persists it; it
    // throws usage_error if the offset is outside the data area or another heap is registered.
    std::uint64_t heap_offset() const noexcept { return state().heap_offset; }
    void register_heap(std::uint64_t offset);
    // The pool's catalog of named objects (alloc::name_directory registers its first block
    // here; 0 = none). Same rules as register_heap: one catalog per pool, persisted.
    std::uint64_t catalog_offset() const noexcept { return state().catalog_offset; }
    void register_catalog(std::uint64_t offset);

    std::byte* base() const noexcept { return base_; }
    std::uint64_t size() const noexcept { return size_; }
    std::uint64_t used() const noexcept;  // header + data area in use
    bool contains(const void* p, std::size_t n = 1) const noexcept;

    const pool_identity& identity() const noexcept { return header().identity; }
    const pool_state& state() const noexcept { return header().state; }
    std::string_view layout() const noexcept { return identity().layout_name(); }
    const std::filesystem::path& path() const noexcept { return path_; }
    enum granularity granularity() const noexcept { return granularity_; }
    // Whether the file is on a DAX mapping (statx STATX_ATTR_DAX): loads and stores reach the
    // medium without the page cache. Independent of granularity(), which libpmem2 decides.
    bool is_dax() const noexcept { return dax_; }
    bool read_only() const noexcept { return read_only_; }
    // The clean-shutdown flag as found when this pool was opened.
    bool was_clean_at_open() const noexcept { return was_clean_; }

private:
    pool() = default;
    static pool open_validated(const std::filesystem::path& path,
                               const std::string_view* layout, bool read_only);
    pool_header& header() const noexcept { return *reinterpret_cast<pool_header*>(base_); }
    void release() noexcept;
    void register_offset(std::uint64_t pool_state::*field, const char* what, std::uint64_t offset);

    std::filesystem::path path_;
    int fd_ = -1;
    void* map_ = nullptr;  // struct pmem2_map*
    std::byte* base_ = nullptr;
    std::uint64_t size_ = 0;
    enum granularity granularity_ = granularity::page;
    bool read_only_ = false;
    bool dax_ = false;
    bool was_clean_ = false;
};

}  // namespace ferrite::pmem
