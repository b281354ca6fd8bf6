// catalog.cpp: see ferrite/containers/catalog.hpp.
#include "ferrite/containers/catalog.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace ferrite {

std::string_view builtin_type_name(std::uint32_t tag) noexcept {
    static constexpr std::string_view names[] = {"bool", "char", "i8",  "i16", "i32", "i64", "i128", "u8",
                                                 "u16",  "u32",  "u64", "u128", "f32", "f64", "f80"};
    for (auto n : names)
        if (detail::fnv1a32(n) == tag) return n;
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
    return "a " + containers::kind_name(e.kind) + " of " +
           type + " (" + std::to_string(e.element_size) + "-byte elements, alignment " +
           std::to_string(e.element_align) + ")";
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
        if (!containers::find_kind(e->kind)) throw_unknown_kind(*e);
        if (!e->type().accepts(type))
            throw pool_error(pool_errc::type_mismatch,
                             "'" + printable(name) + "' in '" + pool_.path().string() + "' holds " +
                                 describe_stored(*e) + "; asked for a " +
                                 containers::kind_name(type.kind) + " of " +
                                 readable_type_name(type_name) + " (" + std::to_string(type.element_size) +
                                 "-byte elements); open it with the type that created it, or use another name");
        return *e;
    }
    return directory_.find_or_add(name, type);
}

void catalog::throw_unknown_kind(const alloc::directory_entry& e) const {
    throw pool_error(pool_errc::unknown_kind,
                     "'" + printable(e.name_view()) + "' in '" + pool_.path().string() + "' is an object of kind " +
                         std::to_string(e.kind) +
                         ", unknown to this version of ferrite (a pool written by a newer one); open it with that "
                         "version");
}

void catalog::rethrow_named(const damaged_pool& e, const std::string& name) {
    if (!e.object().empty()) throw e;
    throw damaged_pool(e.kind(), e.region(), name, e.region() + " '" + printable(name) + "': " + e.what());
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

void catalog::require_writable(std::string_view name) const {
    pool_.require_open("catalog: opening '" + printable(name) + "'");
    if (pool_.read_only())
        throw usage_error("catalog: cannot open '" + std::string(name) + "': '" + pool_.path().string() +
                          "' is open read-only (pool::inspect), where named objects can be listed, not "
                          "opened; open the pool with pool::open to use them");
}

std::vector<object_info> catalog::list() const {
    pool_.require_open("catalog::list");
    std::vector<object_info> out;
    for (const auto& e : directory_.entries()) {
        std::string type;
        if (e.type_tag != 0) {
            type = builtin_type_name(e.type_tag);
            if (type.empty()) {
                char buf[24];
                std::snprintf(buf, sizeof buf, "tag 0x%08x", e.type_tag);
                type = buf;
            }
        }
        out.push_back({std::string(e.name_view()), containers::kind_name(e.kind), e.element_size, e.element_align,
                       e.anchor != 0, type});
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
        object_check c{std::string(e.name_view()), containers::kind_name(e.kind), {}, {}};
        try {
            std::vector<std::pair<const void*, std::string>> blocks;
            validate_object(e, blocks);
            if (e.anchor == 0) c.detail = "named, creation interrupted by a crash";
            else c.detail = containers::find_kind(e.kind)->describe(pool_, *heap_, e);
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
    const auto* kind = containers::find_kind(e.kind);
    if (!kind) throw_unknown_kind(e);
    if (e.anchor == 0) return;  // named, never created
    try {
        for (const auto off : kind->validate(pool_, *heap_, e)) blocks.emplace_back(pool_.base() + off, name);
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
        try {
            containers::find_kind(e.kind)->recover(pool_, *heap_, e);  // validate() found every kind
        } catch (const damaged_pool& x) {
            rethrow_named(x, std::string(e.name_view()));
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
