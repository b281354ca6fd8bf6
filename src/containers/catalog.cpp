// catalog.cpp: see ferrite/containers/catalog.hpp.
#include "ferrite/containers/catalog.hpp"

#include "ferrite/containers/vector_recovery.hpp"

namespace ferrite {

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
// A heap opened but not recovered refuses allocations: every push that needs to grow a
// vector would fail. Say so at once instead. (Read-only pools are only read.)
alloc::buddy_heap& recovered(pmem::pool& pool, alloc::buddy_heap& heap) {
    if (!pool.read_only() && !heap.recovery_finished())
        throw usage_error("the heap of '" + pool.path().string() +
                          "' was opened but not recovered; call ferrite::catalog::recover_pool(pool, heap) "
                          "after every open (it is cheap after a clean shutdown)");
    return heap;
}
}  // namespace

catalog::catalog(pmem::pool& pool, heap_type& heap, alloc::directory_options options)
    : pool_(&pool), heap_(&recovered(pool, heap)),
      directory_(alloc::name_directory::open_or_create(pool, heap, options)) {}

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
    void* region = pool_->base() + anchor;
    bytes = heap_->block_size(region);
    if (bytes == 0)
        throw error("catalog entry '" + std::string(name) + "' of '" + pool_->path().string() +
                    "' names no allocated heap block (damaged catalog); restore the pool from a copy");
    return region;
}

void catalog::require_writable(std::string_view name) const {
    if (pool_->read_only())
        throw usage_error("catalog: cannot open '" + std::string(name) + "': '" + pool_->path().string() +
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
        default: (void)dfc_deque<std::uint64_t>::open(region, bytes, o); break;
    }
}

std::vector<object_info> catalog::list() const {
    std::vector<object_info> out;
    for (const auto& e : directory_.entries()) {
        const auto known = to_string(static_cast<object_kind>(e.kind));
        out.push_back({std::string(e.name_view()),
                       known.empty() ? "unknown(" + std::to_string(e.kind) + ")" : std::string(known),
                       e.element_size, e.element_align, e.anchor != 0});
    }
    return out;
}

void catalog::recover() {
    std::lock_guard guard(*lock_);
    directory_.recover();
    for (const auto& e : directory_.entries()) {
        if (e.anchor == 0) continue;  // named, never created: nothing to recover
        switch (static_cast<object_kind>(e.kind)) {
            case object_kind::vector:
                containers::recover_vector(*pool_, *heap_, containers::vector_header_at(*pool_, e.anchor));
                break;
            case object_kind::dfc_stack:
            case object_kind::dfc_queue:
            case object_kind::dfc_deque:
                recover_dfc(static_cast<object_kind>(e.kind), e.name_view(), e.anchor);
                break;
            default:
                throw error("catalog entry '" + std::string(e.name_view()) + "' of '" + pool_->path().string() +
                            "' has object kind " + std::to_string(e.kind) +
                            ", unknown to this version of ferrite; recover the pool with the version that wrote it");
        }
    }
}

void catalog::recover_pool(pmem::pool& pool, heap_type& heap) {
    heap.recover();
    if (pool.catalog_offset() != 0) {
        auto dir = alloc::name_directory::open_or_create(pool, heap);  // exists: only validates
        catalog c(pool, heap, std::move(dir));
        c.recover();
    }
    heap.finish_recovery();
}

}  // namespace ferrite
