// ferrite/containers/store.hpp: a pool with its heap and catalog, created or opened in one call.
//
//   auto s = ferrite::store::open_or_create("orders", "orders-v1", {.size = 256 << 20});
//   auto prices = s.names().open_vector<double>("prices");   // created empty on first use
//   prices->push_back(9.5);                                    // durable when it returns
//
// Whatever instant an earlier run was killed at, first run included, this opens: a new pool
// is built completely (header, profile, root, heap, catalog) in a file that has no name yet
// and is linked under its name only then (pmem::pool::create's `initialise` step), so the
// name never shows a half-made pool. A pool whose setup was interrupted anyway (its profile
// says "store" but its heap or catalog word is 0: an in-place finish killed half-way, or a
// blank pool from pmem::pool::create) is finished by the next open; `ferrite pool check`
// reports it as an unfinished initialisation. A heap with no catalog entry whose recovered
// heap still holds a block is not unfinished but damaged (the roots table has no checksum):
// refused, since a new catalog would lose every named object.
//
// Opening never writes before everything it will rely on was validated: the recovery the
// pool needs (heap, catalog, every named object: catalog::recover_pool) and the validation
// of every named object (catalog::validate) are first rehearsed on a copy-on-write mapping of
// the file (pmem::pool::private_copy), and the recovered heap gets its whole check()
// (free lists, block map: what the heap itself validates only where an operation uses it),
// so that a pool which opens is one `pool check` calls consistent; the check costs one pass
// over the block map (a byte per 64 bytes of heap). Recovery is deterministic, so once the rehearsal
// succeeded the real one does; if it failed, the error (damaged_pool naming the region and
// object) leaves the file byte-identical and the clean-shutdown flag as it was.
//
// The pool, heap and catalog live at stable addresses owned by the store, so a store may be
// moved freely; close() (or the destructor) closes the catalog, the heap and the pool in that
// order, marking the pool clean.
//
// Not from a paper: the PFC thesis's pool is created by the program step by step.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <string_view>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/alloc/name_directory.hpp"
#include "ferrite/containers/catalog.hpp"
#include "ferrite/pmem/pool.hpp"

namespace ferrite {

struct store_options {
    std::uint64_t size = std::uint64_t{64} << 20;  // bytes of a new pool file
    std::uint64_t heap_size = 0;  // bytes of its heap; 0: all of the data area
    // Bytes of a zero-filled area the program owns (its own durable words, written with
    // pmem::pwb/pfence), in the pool's root before the heap: store::user_root<T>().
    std::uint64_t user_bytes = 0;
    alloc::heap_options heap{};
    alloc::directory_options directory{};
};

class store {
public:
    // Open the pool at `path` (a bare name lives in $FERRITE_POOL_DIR), or create it with
    // `options` if there is none. Safe against concurrent creators (one wins, the others open).
    static store open_or_create(const std::filesystem::path& path, std::string_view layout,
                                const store_options& options = {});
    // Open an existing store: pool_error(not_found) if none, pool_error(unfinished) for a
    // plain pool that has a root but no heap (made by pmem::pool::create, not a store).
    static store open(const std::filesystem::path& path, std::string_view layout);
    // Create a new store: pool_error(already_exists) if the name is taken.
    static store create(const std::filesystem::path& path, std::string_view layout,
                        const store_options& options = {});
    // The setup step create() runs on a new pool before it is named (also for tools that
    // build a pool with pmem::pool::create): profile, root, heap, catalog.
    static void initialise(pmem::pool& pool, const store_options& options);

    store(store&&) noexcept = default;
    store& operator=(store&&) noexcept;
    ~store();

    pmem::pool& pool() noexcept { return *pool_; }
    alloc::buddy_heap& heap() noexcept { return *heap_; }
    catalog& names() noexcept { return *names_; }

    // The program's own area (store_options::user_bytes at create, rounded up to 64; empty
    // if none), zero-filled when the pool was created.
    std::span<std::byte> user_area() noexcept;
    template <class T>
    T& user_root() {
        static_assert(std::is_trivially_destructible_v<T> && std::is_standard_layout_v<T>,
                      "the user area lives in a file: use a standard-layout, trivially destructible type");
        const auto area = user_area();
        if (area.size() < sizeof(T))
            throw usage_error("store: the user area of '" + pool_->path().string() + "' has " +
                              std::to_string(area.size()) + " bytes, " + std::to_string(sizeof(T)) +
                              " asked for; create the pool with store_options::user_bytes >= sizeof(T)");
        return *reinterpret_cast<T*>(area.data());
    }

    bool created() const noexcept { return created_; }              // this call made the file
    bool recovered_from_crash() const noexcept { return crashed_; }  // the last user did not close it
    bool finished_setup() const noexcept { return finished_; }      // an interrupted setup was completed

    // Close the catalog, the heap and the pool (marking it clean). Idempotent.
    void close() noexcept;

private:
    store() = default;
    static store open_existing(const std::filesystem::path& path, std::string_view layout, bool* not_found);

    std::unique_ptr<pmem::pool> pool_;
    std::unique_ptr<alloc::buddy_heap> heap_;
    std::unique_ptr<catalog> names_;
    bool created_ = false;
    bool crashed_ = false;
    bool finished_ = false;
};

// What `ferrite pool check` and store::open find: whether a pool's setup as a store is
// unfinished (profile store, heap or catalog word 0), and a sentence saying so.
bool setup_unfinished(const pmem::pool_ref& pool) noexcept;

}  // namespace ferrite
