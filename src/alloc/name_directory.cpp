// name_directory.cpp: see ferrite/alloc/name_directory.hpp for the layout and the crash argument.
#include "ferrite/alloc/name_directory.hpp"

#include <algorithm>
#include <cstring>
#include <span>

#include "ferrite/error.hpp"
#include "ferrite/pmem/primitives.hpp"
#include "ferrite/pmem/flow.hpp"

namespace ferrite::alloc {

namespace {
constexpr std::uint64_t directory_magic = 0x3167'6c61'7461'6346ull;  // "Fcatalg1"
constexpr std::size_t block_bytes = 4096;
constexpr std::size_t max_entries_per_block = block_bytes / sizeof(directory_entry) - 1;

void validate_name(std::string_view name) {
    const bool printable = std::all_of(name.begin(), name.end(), [](char c) { return c > ' ' && c < 127; });
    if (name.empty() || name.size() > max_object_name || !printable)
        throw usage_error("object name '" + std::string(name) + "' is invalid: use 1 to " +
                          std::to_string(max_object_name) + " printable characters without spaces");
}

// One line, kind before anchor: the entry persists with the anchor the caller writes next
// (see the header); no write-back of its own.
void write_entry(directory_entry& e, std::string_view name, object_type type) noexcept {
    e.anchor = 0;
    std::memset(e.name, 0, sizeof e.name);
    std::memcpy(e.name, name.data(), name.size());
    e.element_size = type.element_size;
    e.type_tag = type.type_tag;
    e.element_align = type.element_align;
    e.kind = type.kind;
}
}  // namespace

struct alignas(64) name_directory::block {
    std::uint64_t magic;
    std::uint64_t next;      // pool offset of the next block, 0 = last
    std::uint64_t capacity;  // entries in this block
    std::uint64_t reserved[5];
    directory_entry entries[max_entries_per_block];
    std::span<directory_entry> used() noexcept { return {entries, capacity}; }
    std::span<const directory_entry> used() const noexcept { return {entries, capacity}; }
};
// (sizeof(block) == block_bytes is checked inside name_directory::checked.)

std::string_view directory_entry::name_view() const noexcept {
    return {name, ::strnlen(name, sizeof name)};
}

name_directory name_directory::open_or_create(pmem::pool_ref pool, buddy_heap& heap, directory_options options) {
    if (options.entries_per_block == 0 || options.entries_per_block > max_entries_per_block)
        throw usage_error("a catalog block holds 1 to " + std::to_string(max_entries_per_block) + " entries");
    pool.require_open("name_directory::open_or_create");
    const bool exists = pool.catalog_offset() != 0;
    name_directory d(std::move(pool), heap, options);
    if (exists)
        d.validate();
    else
        d.add_block(nullptr);
    return d;
}

void name_directory::damaged(std::string_view entry, const std::string& what) const {
    throw_damaged(pool_errc::damaged_catalog, "catalog", entry,
                  "damaged in '" + pool_.path().string() + "': " + what + "; restore the pool from a backup");
}

void name_directory::validate() const {
    std::lock_guard guard(*lock_);
    // The chain: every block checked(), and no loop (a damaged `next` pointing back would
    // make every later walk endless): at most one block per 4 KiB of pool.
    std::vector<const block*> seen;
    std::vector<std::string_view> names;
    for (const block* b = first(); b; b = next(b)) {
        if (std::find(seen.begin(), seen.end(), b) != seen.end()) damaged("", "its chain of blocks loops");
        seen.push_back(b);
        for (const auto& e : b->used()) {
            if (e.kind == 0) continue;
            const auto at = " (catalog block at pool offset " +
                            std::to_string(reinterpret_cast<const std::byte*>(b) - pool_.base()) + ")";
            if (e.name[max_object_name] != '\0' || e.name[0] == '\0')
                damaged("", "an entry's name is empty or not terminated" + at);
            const auto name = e.name_view();
            if (std::find(names.begin(), names.end(), name) != names.end())
                damaged(name, "two entries have this name" + at);
            names.push_back(name);
            if (e.element_size == 0 || e.element_align == 0 || (e.element_align & (e.element_align - 1)) != 0 ||
                e.element_align > 4096)
                damaged(name, "element size " + std::to_string(e.element_size) + " / alignment " +
                                  std::to_string(e.element_align) + " is impossible" + at);
            // Compared as offsets: base + a damaged anchor may not even be a pointer (UB).
            if (e.anchor != 0 && (e.anchor > pool_.size() || pool_.size() - e.anchor < 8))
                damaged(name, "its object offset " + std::to_string(e.anchor) + " is outside the pool" + at);
        }
    }
}

name_directory::block* name_directory::checked(std::uint64_t offset) const {
    static_assert(sizeof(block) == block_bytes);
    if (offset % alignof(block) != 0 || offset > pool_.size() || pool_.size() - offset < sizeof(block))
        damaged("", "the catalog block offset " + std::to_string(offset) + " is outside the pool");
    auto* b = reinterpret_cast<block*>(pool_.base() + offset);
    if (heap_->block_size(b) < sizeof(block))
        damaged("", "the catalog block at pool offset " + std::to_string(offset) + " is not a live heap block of " +
                        std::to_string(block_bytes) + " bytes");
    if (b->magic != directory_magic || b->capacity == 0 || b->capacity > max_entries_per_block)
        damaged("", "the block at pool offset " + std::to_string(offset) + " is not a ferrite catalog block");
    return b;
}

name_directory::block* name_directory::first() const { return checked(pool_.catalog_offset()); }

name_directory::block* name_directory::next(const block* b) const {
    return b->next ? checked(b->next) : nullptr;
}

// A new formatted block linked after `last` (or registered as the first when last is null).
FERRITE_FLOW_ROOT name_directory::block* name_directory::add_block(block* last) {
    void* mem = heap_->allocate(sizeof(block));  // pending until confirmed below
    auto* b = static_cast<block*>(mem);
    std::memset(b, 0, sizeof(block));
    b->magic = directory_magic;
    b->capacity = options_.entries_per_block;
    pmem::pwb_range(b, sizeof(block));
    pmem::pfence();  // PP: the block is formatted before anything names it
    const auto offset = static_cast<std::uint64_t>(static_cast<std::byte*>(mem) - pool_.base());
    if (last == nullptr) {
        pool_.register_catalog(offset);  // persists its pool roots entry (its own PP)
    } else {
        last->next = offset;
        pmem::pwb(&last->next);
        pmem::pfence();  // PP: linked; recover() confirms it if we crash before the next line
    }
    heap_->confirm_allocation(mem);
    return b;
}

directory_entry* name_directory::find_locked(std::string_view name) const {
    for (block* b = first(); b; b = next(b))
        for (auto& e : b->used())
            if (e.kind != 0 && e.name_view() == name) return &e;
    return nullptr;
}

directory_entry* name_directory::find(std::string_view name) {
    validate_name(name);
    std::lock_guard guard(*lock_);
    return find_locked(name);
}

directory_entry& name_directory::find_or_add(std::string_view name, object_type type) {
    validate_name(name);
    if (type.kind == 0) throw usage_error("object kind 0 is reserved for free catalog entries");
    std::lock_guard guard(*lock_);
    if (auto* e = find_locked(name)) {
        if (!e->type().accepts(type))
            throw pool_error(pool_errc::type_mismatch,
                             "'" + std::string(name) + "' in '" + pool_.path().string() + "' holds object kind " +
                                 std::to_string(e->kind) + " of " + std::to_string(e->element_size) +
                                 "-byte elements (alignment " + std::to_string(e->element_align) + ", type tag " +
                                 std::to_string(e->type_tag) + "); open it with the type that created it");
        return *e;
    }
    block* last = nullptr;
    for (block* b = first(); b; b = next(b)) {
        last = b;
        for (auto& e : b->used()) {
            if (e.kind != 0) continue;
            write_entry(e, name, type);
            return e;
        }
    }
    block* b = add_block(last);
    write_entry(b->entries[0], name, type);
    return b->entries[0];
}

std::vector<directory_entry> name_directory::entries() const {
    std::lock_guard guard(*lock_);
    std::vector<directory_entry> out;
    for (const block* b = first(); b; b = next(b))
        for (const auto& e : b->used())
            if (e.kind != 0) out.push_back(e);
    return out;
}

void name_directory::remove_unpublished(directory_entry& e) noexcept {
    std::lock_guard guard(*lock_);
    if (e.anchor == 0) e.kind = 0;
}

void name_directory::recover() {
    std::lock_guard guard(*lock_);
    for (block* b = first(); b; b = next(b)) heap_->confirm_allocation(b);
}

std::vector<const void*> name_directory::blocks() const {
    std::lock_guard guard(*lock_);
    std::vector<const void*> out;
    for (const block* b = first(); b; b = next(b)) out.push_back(b);
    return out;
}

}  // namespace ferrite::alloc
