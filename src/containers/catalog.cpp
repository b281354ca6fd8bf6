// catalog.cpp: see ferrite/containers/catalog.hpp.
#include "ferrite/containers/catalog.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "ferrite/containers/dfc_checks.hpp"
#include "ferrite/containers/vector_recovery.hpp"

namespace ferrite {

std::string_view builtin_type_name(std::uint32_t tag) noexcept {
    static constexpr std::string_view names[] = {"bool", "char", "i8",  "i16", "i32", "i64", "i128", "u8",
                                                 "u16",  "u32",  "u64", "u128", "f32", "f64", "f80"};
    for (auto n : names)
        if (detail::fnv1a32(n) == tag) return n;
    return {};
}

std::string_view to_string(object_kind k) noexcept {
    switch (k) {
        case object_kind::vector: return "vector";
        case object_kind::dfc_stack: return "dfc_stack";
        case object_kind::dfc_queue: return "dfc_queue";
        case object_kind::dfc_deque: return "dfc_deque";
    }
    return {};
}

namespace {
// A heap opened after a restart refuses every change until its recover() ran: the catalog
// needs that much (its recover() runs between the heap's recover() and finish_recovery()).
// (Read-only pools are only read.)
alloc::buddy_heap& recovery_started(const pmem::pool_ref& pool, alloc::buddy_heap& heap) {
    pool.require_open("catalog");
    if (!pool.read_only() && heap.needs_recovery())
        throw usage_error("the heap of '" + pool.path().string() +
                          "' was opened but not recovered; call ferrite::catalog::recover_pool(pool, heap) "
                          "after every open (it is cheap after a clean shutdown), or use ferrite::store");
    return heap;
}

// The pools that have a catalog in this process (one each: two directories over one pool
// would add entries without seeing each other's in-flight ones).
std::mutex registry_lock;
std::set<const void*>& registry() {
    static std::set<const void*> pools;
    return pools;
}

void unregister_catalog(const void* key) {
    std::lock_guard guard(registry_lock);
    registry().erase(key);
}

std::unique_ptr<const void, void (*)(const void*)> register_catalog(const pmem::pool_ref& pool) {
    std::lock_guard guard(registry_lock);
    if (!registry().insert(pool.identity_key()).second)
        throw usage_error("a catalog of '" + pool.path().string() +
                          "' is already open in this process; share that one (it is safe to use from every "
                          "thread) or destroy it first");
    return {pool.identity_key(), &unregister_catalog};
}

std::string readable_type_name(std::string name) {
    int status = 0;
    char* plain = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
    if (status == 0 && plain) name = plain;
    std::free(plain);
    return name;
}

std::string describe_stored(const alloc::directory_entry& e) {
    const auto kind = to_string(static_cast<object_kind>(e.kind));
    std::string type;
    if (e.type_tag == 0) {
        type = "untagged elements";
    } else if (const auto builtin = builtin_type_name(e.type_tag); !builtin.empty()) {
        type = std::string(builtin);
    } else {
        char buf[24];
        std::snprintf(buf, sizeof buf, "type tag 0x%08x", e.type_tag);
        type = buf;
    }
    return "a " + std::string(kind.empty() ? "object of kind " + std::to_string(e.kind) : std::string(kind)) + " of " +
           type + " (" + std::to_string(e.element_size) + "-byte elements, alignment " +
           std::to_string(e.element_align) + ")";
}

// A DFC entry's structure validated whole, read-only (containers/dfc_checks.hpp), and the
// pool offsets of the heap blocks it owns. Elements are opaque words: any T checks the same.
std::vector<std::uint64_t> dfc_blocks(object_kind kind, const pmem::pool_ref& pool, const alloc::buddy_heap& heap,
                                      std::uint64_t anchor) {
    switch (kind) {
        case object_kind::dfc_stack: return containers::dfc_owned_blocks<dfc_stack<std::uint64_t>>(pool, heap, anchor);
        case object_kind::dfc_queue: return containers::dfc_owned_blocks<dfc_queue<std::uint64_t>>(pool, heap, anchor);
        case object_kind::dfc_deque: return containers::dfc_owned_blocks<dfc_deque<std::uint64_t>>(pool, heap, anchor);
        case object_kind::vector: break;  // not a DFC kind
    }
    return {};
}
}  // namespace

catalog::catalog(const pmem::pool_ref& pool, heap_type& heap, alloc::directory_options options)
    : pool_(pool), heap_(&recovery_started(pool, heap)), registration_(register_catalog(pool)),
      directory_(alloc::name_directory::open_or_create(pool, heap, options)) {}

catalog::~catalog() = default;

void catalog::require_recovered(std::string_view name) const {
    pool_.require_open("catalog: open '" + std::string(name) + "'");
    if (!heap_->recovery_finished())
        throw usage_error("catalog: cannot open '" + std::string(name) +
                          "' before the heap's recovery finished (heap.finish_recovery(), or recover_pool)");
}

alloc::directory_entry& catalog::entry_for(std::string_view name, const alloc::object_type& type,
                                           const std::string& type_name) {
    if (auto* e = directory_.find(name)) {
        if (to_string(static_cast<object_kind>(e->kind)).empty())
            throw pool_error(pool_errc::unknown_kind,
                             "'" + printable(name) + "' in '" + pool_.path().string() + "' is an object of kind " +
                                 std::to_string(e->kind) +
                                 ", unknown to this version of ferrite (a pool written by a newer one); open it "
                                 "with that version");
        if (!e->type().accepts(type))
            throw pool_error(pool_errc::type_mismatch,
                             "'" + printable(name) + "' in '" + pool_.path().string() + "' holds " +
                                 describe_stored(*e) + "; asked for a " +
                                 std::string(to_string(static_cast<object_kind>(type.kind))) + " of " +
                                 readable_type_name(type_name) + " (" + std::to_string(type.element_size) +
                                 "-byte elements); open it with the type that created it, or use another name");
        return *e;
    }
    return directory_.find_or_add(name, type);
}

void catalog::rethrow_named(const damaged_pool& e, const std::string& name) {
    if (!e.object().empty()) throw e;
    throw damaged_pool(e.kind(), e.region(), name, e.region() + " '" + printable(name) + "': " + e.what());
}

void catalog::discard(void* pending_block) noexcept {
    try {
        heap_->confirm_allocation(pending_block);
        heap_->deallocate(pending_block);
        heap_->confirm_deallocation(pending_block);
    } catch (...) {
        // Left pending: the heap's next recovery frees it.
    }
}

std::shared_ptr<void> catalog::find_live(std::string_view name, std::type_index type) {
    const auto it = live_.find(name);
    if (it == live_.end()) return nullptr;
    auto object = it->second.object.lock();
    if (!object) {
        live_.erase(it);
        return nullptr;
    }
    if (it->second.type != type)
        throw usage_error("'" + std::string(name) +
                          "' is open in this process with another engine or element type; use the same "
                          "type everywhere, or release the other handle first");
    return object;
}

// The heap block a DFC entry's anchor names, and its size. Throws ferrite::error if the
// anchor names no allocated block (a damaged catalog).
void* catalog::dfc_region(std::string_view name, std::uint64_t anchor, std::size_t& bytes) const {
    void* region = pool_.base() + anchor;
    bytes = heap_->block_size(region);
    if (bytes == 0)
        throw_damaged(pool_errc::damaged_catalog, "catalog", name,
                      "its entry names no allocated heap block in '" + pool_.path().string() +
                          "'; restore the pool from a copy");
    return region;
}

void catalog::require_writable(std::string_view name) const {
    pool_.require_open("catalog: opening '" + printable(name) + "'");
    if (pool_.read_only())
        throw usage_error("catalog: cannot open '" + std::string(name) + "': '" + pool_.path().string() +
                          "' is open read-only (pool::inspect), where named objects can be listed, not "
                          "opened; open the pool with pool::open to use them");
}

void catalog::check_dfc_threads(std::string_view name, std::uint64_t created, unsigned asked) {
    if (asked <= created) return;
    throw usage_error("catalog: '" + std::string(name) + "' was created for " + std::to_string(created) +
                      " thread ids (0.." + std::to_string(created - 1) + "); " + std::to_string(asked) +
                      " were asked for. A DFC structure's thread count is fixed at create: open it with at most " +
                      std::to_string(created) + ", or give the larger count to a new name");
}

// Recovery of a named DFC structure: confirm its block (a crash may have come between the
// anchor and the confirmation), then open it, which runs its recovery (opaque elements:
// any element type recovers the same way).
void catalog::recover_dfc(object_kind kind, std::string_view name, std::uint64_t anchor) {
    std::size_t bytes = 0;
    void* region = dfc_region(name, anchor, bytes);
    heap_->confirm_allocation(region);
    combining::dfc_options o;
    o.grow_from = heap_;
    switch (kind) {
        case object_kind::dfc_stack: (void)dfc_stack<std::uint64_t>::open(region, bytes, o); break;
        case object_kind::dfc_queue: (void)dfc_queue<std::uint64_t>::open(region, bytes, o); break;
        case object_kind::dfc_deque: (void)dfc_deque<std::uint64_t>::open(region, bytes, o); break;
        case object_kind::vector: break;  // not a DFC kind: recover() never asks
    }
}

std::vector<object_info> catalog::list() const {
    pool_.require_open("catalog::list");
    std::vector<object_info> out;
    for (const auto& e : directory_.entries()) {
        const auto known = to_string(static_cast<object_kind>(e.kind));
        std::string type;
        if (e.type_tag != 0) {
            type = builtin_type_name(e.type_tag);
            if (type.empty()) {
                char buf[24];
                std::snprintf(buf, sizeof buf, "tag 0x%08x", e.type_tag);
                type = buf;
            }
        }
        out.push_back({std::string(e.name_view()),
                       known.empty() ? "unknown(" + std::to_string(e.kind) + ")" : std::string(known),
                       e.element_size, e.element_align, e.anchor != 0, type});
    }
    return out;
}

void catalog::validate() const {
    pool_.require_open("catalog::validate");
    std::vector<std::pair<const void*, std::string>> blocks;
    directory_.validate();
    for (const void* b : directory_.blocks()) blocks.emplace_back(b, "the catalog");
    for (const auto& e : directory_.entries()) validate_object(e, blocks);
    std::sort(blocks.begin(), blocks.end());
    for (std::size_t i = 1; i < blocks.size(); ++i)
        if (blocks[i].first == blocks[i - 1].first)
            throw_damaged(pool_errc::damaged_catalog, "catalog", blocks[i].second,
                          "the heap block at pool offset " +
                              std::to_string(static_cast<const std::byte*>(blocks[i].first) - pool_.base()) +
                              " belongs to it and to " + printable(blocks[i - 1].second) + " in '" +
                              pool_.path().string() + "'; restore the pool from a backup");
}

std::vector<object_check> catalog::check_objects() const {
    pool_.require_open("catalog::check_objects");
    directory_.validate();
    std::vector<object_check> out;
    for (const auto& e : directory_.entries()) {
        const auto kind = to_string(static_cast<object_kind>(e.kind));
        object_check c{std::string(e.name_view()),
                       kind.empty() ? "unknown(" + std::to_string(e.kind) + ")" : std::string(kind), {}};
        try {
            std::vector<std::pair<const void*, std::string>> blocks;
            validate_object(e, blocks);
        } catch (const std::exception& x) {
            c.problem = x.what();
        }
        out.push_back(std::move(c));
    }
    return out;
}

void catalog::validate_object(const alloc::directory_entry& e,
                              std::vector<std::pair<const void*, std::string>>& blocks) const {
    const std::string name(e.name_view());
    const auto kind = static_cast<object_kind>(e.kind);
    if (to_string(kind).empty())
        throw pool_error(pool_errc::unknown_kind, "'" + printable(name) + "' in '" + pool_.path().string() +
                                                      "' is an object of kind " + std::to_string(e.kind) +
                                                      ", unknown to this version of ferrite; open the pool with "
                                                      "the version that wrote it");
    if (e.anchor == 0) return;  // named, never created
    try {
        switch (kind) {
            case object_kind::vector: {
                // Every header word, and the element shape the entry records (the header's own).
                (void)containers::validate_vector(pool_, *heap_, e.anchor, {e.element_size, e.element_align});
                for (const auto off : containers::vector_owned_blocks(pool_, *heap_, e.anchor))
                    blocks.emplace_back(pool_.base() + off, name);
                break;
            }
            case object_kind::dfc_stack:
            case object_kind::dfc_queue:
            case object_kind::dfc_deque:
                for (const auto off : dfc_blocks(kind, pool_, *heap_, e.anchor))
                    blocks.emplace_back(pool_.base() + off, name);
                break;
        }
    } catch (const damaged_pool& x) {
        rethrow_named(x, name);
    }
}

void catalog::recover() {
    pool_.require_open("catalog::recover");
    std::lock_guard guard(*lock_);
    validate();
    directory_.recover();
    for (const auto& e : directory_.entries()) {
        if (e.anchor == 0) continue;  // named, never created: nothing to recover
        switch (static_cast<object_kind>(e.kind)) {
            case object_kind::vector:
                containers::recover_vector(pool_, *heap_, e.anchor);  // validates the header first
                break;
            case object_kind::dfc_stack:
            case object_kind::dfc_queue:
            case object_kind::dfc_deque:
                recover_dfc(static_cast<object_kind>(e.kind), e.name_view(), e.anchor);
                break;
        }
    }
}

void catalog::recover_pool(const pmem::pool_ref& pool, heap_type& heap) {
    heap.recover();
    if (pool.catalog_offset() != 0) {
        catalog c(pool, heap);  // exists: only validates
        c.recover();
    }
    heap.finish_recovery();
    pool.mark_recovered();
}

}  // namespace ferrite
