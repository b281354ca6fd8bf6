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
//   * create never overwrites and never leaves a half-made file under the final name: the
//     file is built as an unnamed temporary (O_TMPFILE; a short hidden name where the file
//     system lacks it, swept by the next create once its creator is gone), its header
//     written and synced, the caller's `initialise` step run on it (a heap, a catalog: see
//     ferrite::store), and only then is it linked under its name. A kill at any instant
//     leaves either no file or a complete one.
//   * open validates the whole header before mapping and takes an exclusive flock(2);
//     every failure throws pool_error with a kind() and a message that says what to do,
//     and leaves the file untouched (it is opened read-only until validation passes).
//   * the clean-shutdown flag is cleared when the pool is put in use (open, or
//     mark_in_use() after open_unmarked) and set again by close() only if the pool was clean
//     when opened or its recovery was declared finished (mark_recovered(), which
//     catalog::recover_pool and ferrite::store call). A failed open or recovery therefore
//     never marks a crashed pool clean.
//   * private_copy() maps the same file copy-on-write: a rehearsal of recovery there writes
//     nothing to the file (ferrite::store and `ferrite pool check` validate that way).
//   * a pool is a move-only owner of a shared core; pool_ref is a copyable non-owning handle
//     to the same core, which structures keep. Moving the pool leaves them valid; closing it
//     makes require_open() throw usage_error in every structure instead of touching an
//     unmapped range.
// Crash consistency of the root and of registered roots: see pool_header.hpp (root_offset
// is the commit point of the root, one roots entry word that of a registration).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include "ferrite/error.hpp"
#include "ferrite/pmem/pool_header.hpp"

namespace ferrite::pmem {

// Persistence granularity of a mapping, as libpmem2 reports it.
enum class granularity : std::uint8_t { byte, cache_line, page };
std::string_view to_string(granularity) noexcept;

namespace detail {
struct pool_core;  // the mapping, the descriptor and the flags (pool.cpp)
}

// What a pool's state line says it was made to hold (pool_state::profile).
enum class pool_profile : std::uint64_t {
    plain = 0,                        // root only; the program lays out the rest
    store = 0x31524f5453524546ull,    // "FERSTOR1": a heap and a catalog (ferrite::store)
};

// A handle to an open pool that does not own it: copyable, cheap, and unaffected when the
// owning `pool` object moves. After the pool is closed, is_open() is false and
// require_open() throws usage_error; the other accessors must not be used then.
class pool_ref {
public:
    pool_ref() = default;

    bool is_open() const noexcept;
    // Throws usage_error ("pool '...' is closed: <what> needs it open ...") if closed.
    void require_open(std::string_view what) const;

    // The root object: zero-filled on the first call, the same bytes on every later open.
    // T must be trivially destructible and standard-layout (it lives in the file).
    template <class T>
    T& root() const {
        static_assert(std::is_trivially_destructible_v<T> && std::is_standard_layout_v<T>,
                      "pool roots live in a file: use a standard-layout, trivially "
                      "destructible type (offset_ptr instead of raw pointers)");
        return *static_cast<T*>(root_bytes(sizeof(T), alignof(T)));
    }
    // Root of size `bytes` (alignment up to 64). Throws pool_error(root_mismatch) if a root
    // of another size exists, pool_error(out_of_space) if it does not fit.
    void* root_bytes(std::size_t bytes, std::size_t alignment = 64) const;

    // Registered roots (pool_header.hpp's roots table): where a feature keeps its structure,
    // so that it, `ferrite pool info/check` and programs find it again without a header field
    // of its own. root_offset(id) is 0 if `id` is not registered. register_root persists one
    // entry (its commit point: the structure must be formatted and durable already); it
    // throws usage_error if the offset is not 64-byte aligned inside the used data area,
    // if `id` is 0, if `id` is registered at another offset or another id at this offset,
    // or if the table is full (max_roots). Registering the same id and offset again does
    // nothing.
    std::uint64_t root_offset(root_id id) const noexcept;
    void register_root(root_id id, std::uint64_t offset, std::string_view what = "root") const;
    const pool_roots& roots() const noexcept { return header().roots; }

    // The pool's heap: the offset alloc::buddy_heap::create registered (root id 1, 0 =
    // none), so that `ferrite pool info/check` and programs can find it. One heap per pool.
    std::uint64_t heap_offset() const noexcept { return root_offset(root_ids::heap); }
    void register_heap(std::uint64_t offset) const { register_root(root_ids::heap, offset, "heap"); }
    // The pool's catalog of named objects (alloc::name_directory registers its first block
    // as root id 2; 0 = none). Same rules as register_heap: one catalog per pool, persisted.
    std::uint64_t catalog_offset() const noexcept { return root_offset(root_ids::catalog); }
    void register_catalog(std::uint64_t offset) const { register_root(root_ids::catalog, offset, "catalog"); }
    // What the pool was made to hold; set_profile persists it (before the first heap or
    // catalog root, so that an interrupted setup is recognisable: pool check, store::open).
    pool_profile profile() const noexcept { return static_cast<pool_profile>(state().profile); }
    void set_profile(pool_profile p) const;

    std::byte* base() const noexcept;
    std::uint64_t size() const noexcept;
    std::uint64_t used() const noexcept { return state().data_top; }  // header + data area in use
    bool contains(const void* p, std::size_t n = 1) const noexcept;

    const pool_identity& identity() const noexcept { return header().identity; }
    const pool_state& state() const noexcept { return header().state; }
    std::string_view layout() const noexcept { return identity().layout_name(); }
    const std::filesystem::path& path() const noexcept;
    enum granularity granularity() const noexcept;
    // Whether the file is on a DAX mapping (statx STATX_ATTR_DAX): loads and stores reach the
    // medium without the page cache. Independent of granularity(), which libpmem2 decides.
    bool is_dax() const noexcept;
    bool read_only() const noexcept;
    // A copy-on-write mapping (private_copy()): writes never reach the file.
    bool is_private_copy() const noexcept;
    // The clean-shutdown flag as found when this pool was opened.
    bool was_clean_at_open() const noexcept;
    // Recovery after a crash is complete: close() may mark the pool clean again.
    void mark_recovered() const noexcept;
    // Whether two handles refer to the same open pool.
    bool same_pool(const pool_ref& o) const noexcept { return core_ == o.core_; }
    const void* identity_key() const noexcept { return core_.get(); }

protected:
    explicit pool_ref(std::shared_ptr<detail::pool_core> core) : core_(std::move(core)) {}
    const pool_header& header() const noexcept;
    pool_header& mutable_header() const noexcept;

    std::shared_ptr<detail::pool_core> core_;
};

// The owner of an open pool: closes it when destroyed. Move-only; structures opened on it
// keep a pool_ref, so moving the owner is safe.
class pool : public pool_ref {
public:
    // Create a new pool file of `size` bytes (rounded up to 4 KiB) and open it. `path` is
    // resolved with resolve_pool_path(). `initialise` (optional) runs on the open pool before
    // the file gets its name: whatever it writes is there, complete, whenever the name is.
    // If it throws, no file is left. pool_error(already_exists) if the name is taken.
    static pool create(const std::filesystem::path& path, std::string_view layout,
                       std::uint64_t size, const std::function<void(pool&)>& initialise = {});
    // Open an existing pool read-write; its layout must equal `layout`. Clears the
    // clean-shutdown flag (the pool is in use).
    static pool open(const std::filesystem::path& path, std::string_view layout);
    // As open(), but writes nothing yet (the clean-shutdown flag stays as found) until
    // mark_in_use(): for callers that validate, or rehearse recovery on private_copy(),
    // before they change anything. close() writes nothing if mark_in_use() was not called.
    static pool open_unmarked(const std::filesystem::path& path, std::string_view layout);
    void mark_in_use();
    // Open read-only with a shared lock, any layout (for `ferrite pool info/check`).
    static pool inspect(const std::filesystem::path& path);
    // The same file mapped again copy-on-write and writable: every change stays in this
    // process's memory, the file is never written. Shares this pool's lock.
    pool private_copy() const;

    pool() = default;  // closed
    pool(pool&&) noexcept = default;
    pool& operator=(pool&& o) noexcept;
    pool(const pool&) = delete;
    pool& operator=(const pool&) = delete;
    ~pool();  // close()

    // Mark the clean-shutdown flag (read-write pools in use that were clean at open or
    // recovered since), unmap, unlock. Idempotent. Every pool_ref sees it closed.
    void close() noexcept;

private:
    explicit pool(std::shared_ptr<detail::pool_core> core) : pool_ref(std::move(core)) {}
    static pool open_validated(const std::filesystem::path& path,
                               const std::string_view* layout, bool read_only, bool mark);
};

}  // namespace ferrite::pmem
