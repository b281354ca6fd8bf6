// store.cpp: see ferrite/containers/store.hpp for the rules and the crash argument.
#include "ferrite/containers/store.hpp"

#include "ferrite/error.hpp"
#include "ferrite/pmem/pool_header.hpp"

namespace ferrite {
namespace {

using alloc::buddy_heap;

// Where a store's heap goes: its root, `heap_size` bytes (default: all that fits after the
// header, 64-byte aligned).
std::uint64_t user_bytes_for(const store_options& o) { return (o.user_bytes + 63) & ~std::uint64_t{63}; }

std::uint64_t heap_bytes_for(const pmem::pool_ref& p, const store_options& o) {
    if (o.heap_size != 0) return o.heap_size;
    const std::uint64_t top = ((p.used() + 63) & ~std::uint64_t{63}) + user_bytes_for(o);
    return top >= p.size() ? 0 : (p.size() - top) & ~std::uint64_t{63};
}

bool blank(const pmem::pool_ref& p) noexcept {
    const auto& st = p.state();
    return st.profile == 0 && st.root_offset == 0 && p.roots().entries == pmem::pool_roots{}.entries &&
           st.data_top == pmem::pool_header_size;
}

// Each step is skipped once done and crash-safe on its own (heap: magic last, then its
// roots entry; catalog: formatted, then its roots entry), so running this again after a
// kill anywhere inside it finishes the job. A heap formatted but not registered is formatted
// again: nothing refers to it.
void finish_setup(pmem::pool& p, const store_options& o) {
    p.set_profile(pmem::pool_profile::store);
    if (p.heap_offset() == 0) {
        // A root left by an interrupted finish keeps its size; its user area is what lies
        // before the heap, as created.
        const std::uint64_t user = p.state().root_offset != 0 ? 0 : user_bytes_for(o);
        const std::uint64_t bytes = p.state().root_offset != 0 ? p.state().root_size : user + heap_bytes_for(p, o);
        if (bytes <= user) throw usage_error("store: the pool has no room for a heap after the user area");
        auto* root = static_cast<std::byte*>(p.root_bytes(bytes));
        (void)buddy_heap::create(p, static_cast<std::uint64_t>(root - p.base()) + user, bytes - user, o.heap);
    }
    if (p.catalog_offset() == 0) {
        buddy_heap heap = buddy_heap::open(p, p.heap_offset());
        heap.recover();
        heap.finish_recovery();
        catalog names(p, heap, o.directory);  // creates and registers the directory
    }
}

// Everything open will do, on a copy-on-write mapping: throws what the real open would,
// having written nothing to the file. Then the heap's whole check, as `pool check` runs it
// after recovery: the heap validates its free lists and block map only where an operation
// uses them (its open is independent of the arena's size), so damage there would otherwise
// pass this open and fail a later allocation or release, or be found by `pool check` only
// after this open had recovered the pool and marked it clean.
void rehearse(const pmem::pool& p) {
    auto copy = p.private_copy();
    buddy_heap heap = buddy_heap::open(copy, copy.heap_offset());
    catalog::recover_pool(copy, heap);  // validates the catalog and every object first
    if (const auto problems = heap.check(); !problems.empty())
        throw heap_error("the heap of '" + p.path().string() + "' is damaged: " + problems.front() +
                         (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more problems)" : "") +
                         "; nothing was changed: restore the pool from a copy");
}

// A roots table with a heap but no catalog is what a setup killed before its catalog step
// leaves, and also what a damaged catalog entry looks like; finishing the setup would then
// make a new, empty catalog and silently drop every named object. Told apart on a
// copy-on-write mapping: the catalog's first block is allocated pending and confirmed only
// after its roots entry is durable (name_directory::add_block), and nothing else allocates
// before it, so after the heap's recovery an interrupted setup's heap holds no block.
void refuse_lost_catalog(const pmem::pool& p) {
    if (p.heap_offset() == 0 || p.catalog_offset() != 0) return;
    auto copy = p.private_copy();
    buddy_heap heap = buddy_heap::open(copy, copy.heap_offset());  // damaged_heap: refused as it is
    heap.recover();
    heap.finish_recovery();
    std::size_t allocated = 0;
    for (const auto& b : heap.blocks())
        if (b.state != alloc::block_state::free) ++allocated;
    if (allocated == 0) return;
    throw damaged_pool(pool_errc::damaged_catalog, "header roots", "",
                       "pool '" + p.path().string() + "' has no catalog entry in its roots table, but its heap holds " +
                           std::to_string(allocated) +
                           " allocated blocks: the entry was damaged (a setup interrupted before its catalog "
                           "leaves none), and a new catalog would lose every named object; nothing was changed: "
                           "restore the pool from a copy");
}

// A setup registers the heap, then the catalog, and nothing else; so a store whose setup
// looks unfinished may hold those two entries and no other, and the catalog only after the
// heap. Anything else is a damaged roots table (the table has no checksum: it changes while
// the pool is open): a mutated heap entry's id, say, reads as "no heap yet", and finishing
// the setup would then collide with the entry at the heap's place (a usage_error about
// registering a heap, after the open had already marked the pool in use), or format a heap
// over whatever the damaged entry still names. Refused before anything is written.
void refuse_foreign_roots(const pmem::pool& p) {
    const auto damaged = [&](const std::string& what) {
        throw damaged_pool(pool_errc::damaged_state, "header roots", "",
                           "pool '" + p.path().string() + "' is a store whose setup looks unfinished, but its roots "
                           "table " + what + ": the table is damaged (a setup writes the heap's entry, then the "
                           "catalog's, nothing else); nothing was changed: restore the pool from a copy");
    };
    for (const std::uint64_t e : p.roots().entries) {
        if (e == 0) continue;
        const auto id = pmem::root_entry_id(e);
        if (id != pmem::root_ids::heap && id != pmem::root_ids::catalog)
            damaged("holds an entry of root id " + std::to_string(id) + " at offset " +
                    std::to_string(pmem::root_entry_offset(e)));
    }
    if (p.heap_offset() == 0 && p.catalog_offset() != 0) damaged("names a catalog but no heap");
}

}  // namespace

bool setup_unfinished(const pmem::pool_ref& pool) noexcept {
    return pool.profile() == pmem::pool_profile::store && (pool.heap_offset() == 0 || pool.catalog_offset() == 0);
}

void store::initialise(pmem::pool& pool, const store_options& options) { finish_setup(pool, options); }

store store::create(const std::filesystem::path& path, std::string_view layout, const store_options& options) {
    store s;
    s.pool_ = std::make_unique<pmem::pool>(pmem::pool::create(
        path, layout, options.size, [&](pmem::pool& p) { initialise(p, options); }));
    s.heap_.reset(new buddy_heap(buddy_heap::open(*s.pool_, s.pool_->heap_offset())));
    s.heap_->recover();  // a new heap: nothing to do, but open() asks for it
    s.heap_->finish_recovery();
    s.names_ = std::make_unique<catalog>(*s.pool_, *s.heap_, options.directory);
    s.created_ = true;
    return s;
}

store store::open_existing(const std::filesystem::path& path, std::string_view layout, bool* not_found) {
    pmem::pool p;
    try {
        p = pmem::pool::open_unmarked(path, layout);
    } catch (const pool_error& e) {
        if (not_found && e.kind() == pool_errc::not_found) {
            *not_found = true;
            return {};
        }
        throw;
    }
    store s;
    if (setup_unfinished(p) || blank(p)) {
        refuse_foreign_roots(p);
        refuse_lost_catalog(p);
        p.mark_in_use();
        finish_setup(p, {});
        s.finished_ = true;
    } else if (p.heap_offset() == 0) {
        throw pool_error(pool_errc::unfinished,
                         "pool '" + p.path().string() +
                             "' has no heap: it was made by pmem::pool::create as a plain pool (or by a first run "
                             "of an older ferrite that was interrupted); open it with pmem::pool::open, or remove "
                             "it and let ferrite::store create it");
    }
    rehearse(p);
    s.crashed_ = !p.was_clean_at_open();
    p.mark_in_use();
    s.pool_ = std::make_unique<pmem::pool>(std::move(p));
    s.heap_.reset(new buddy_heap(buddy_heap::open(*s.pool_, s.pool_->heap_offset())));
    catalog::recover_pool(*s.pool_, *s.heap_);
    s.names_ = std::make_unique<catalog>(*s.pool_, *s.heap_);
    return s;
}

store store::open(const std::filesystem::path& path, std::string_view layout) {
    return open_existing(path, layout, nullptr);
}

store store::open_or_create(const std::filesystem::path& path, std::string_view layout,
                            const store_options& options) {
    // A concurrent creator may win between our two attempts: then open what it made.
    for (int attempt = 0;; ++attempt) {
        bool not_found = false;
        auto s = open_existing(path, layout, &not_found);
        if (!not_found) return s;
        try {
            return create(path, layout, options);
        } catch (const pool_error& e) {
            if (e.kind() != pool_errc::already_exists || attempt >= 3) throw;
        }
    }
}

std::span<std::byte> store::user_area() noexcept {
    const auto& st = pool_->state();
    const std::uint64_t heap = pool_->heap_offset();
    if (st.root_offset == 0 || heap <= st.root_offset) return {};
    return {pool_->base() + st.root_offset, static_cast<std::size_t>(heap - st.root_offset)};
}

store& store::operator=(store&& o) noexcept {
    if (this != &o) {
        close();
        pool_ = std::move(o.pool_);
        heap_ = std::move(o.heap_);
        names_ = std::move(o.names_);
        created_ = o.created_;
        crashed_ = o.crashed_;
        finished_ = o.finished_;
    }
    return *this;
}

store::~store() { close(); }

void store::close() noexcept {
    names_.reset();
    heap_.reset();
    if (pool_) pool_->close();
    pool_.reset();
}

}  // namespace ferrite
