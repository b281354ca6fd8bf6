// ferrite/containers/catalog.hpp: ferrite's structures by name in a pool.
//
// A pool with a heap holds any number of named structures. The catalog finds or creates
// them, hands every thread of the process the same object for one name (one combining
// engine per structure: two engines over one vector would run two combiners at once), and
// recovers all of them after a crash without the program naming them again.
//
//   auto pool = ferrite::pmem::pool::open("data.pool");
//   auto heap = ferrite::alloc::buddy_heap::open(pool, pool.heap_offset());
//   ferrite::catalog::recover_pool(pool, heap);   // after every open: a no-op after a clean
//                                                 // shutdown, the crash recovery otherwise
//   ferrite::catalog names(pool, heap);
//   auto prices = names.open_vector<double>("prices");   // created empty on first use
//   prices->push_back(9.5);
//   for (const auto& o : names.list()) std::cout << o.name << ' ' << o.kind << '\n';
//   auto jobs = names.open_dfc_queue<std::uint64_t>("jobs", /*threads*/ 8);  // detectable
//
// Built on alloc::name_directory (its layout and crash argument) and the kind registry
// (object_kinds.hpp): open<T> works for every type with a named_kind (vector_kind.hpp,
// pfc_kinds.hpp, dfc_kinds.hpp, sets_kind.hpp, and each new family's), and everything done without the
// element type (list, validate, check_objects, recover) goes through the entry's registered
// kind_ops. Opening a name with another kind or element type (size, alignment and type tag:
// containers/type_tag.hpp) throws pool_error(type_mismatch) naming what the pool holds;
// nothing is changed. A name of a kind this build does not know (a pool from a newer
// ferrite) is pool_error(unknown_kind).
//
// Never trusting the media: every open validates the directory (alloc::name_directory) and
// the object it opens; validate() (pool check, ferrite::store's rehearsal, recover()) checks
// every named object and that no heap block belongs to two of them. Damage throws
// damaged_pool naming the object. A failed open_* leaves no new entry behind.
//
// Misuse that is refused: a second catalog over the same open pool in one process
// (usage_error: two directories would add entries without seeing each other's); opening a
// structure before the heap's recovery finished; a read-only pool (list() and validate()
// work there).
// Crash consistency: each kind's make() fills in the entry's anchor word as its create's
// commit point (the kind headers give the argument), so an entry whose anchor is 0 names
// nothing and is created on the next open; recover() runs every created object's
// registered recovery, which needs no element type.
#pragma once

#include <map>
#include <utility>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <typeindex>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/alloc/name_directory.hpp"
#include "ferrite/alloc/spin_lock.hpp"
#include "ferrite/containers/dfc_kinds.hpp"
#include "ferrite/containers/dpfc_kinds.hpp"
#include "ferrite/containers/object_kinds.hpp"
#include "ferrite/containers/ordered_map_kind.hpp"
#include "ferrite/containers/pfc_kinds.hpp"
#include "ferrite/containers/sets_kind.hpp"
#include "ferrite/containers/type_tag.hpp"
#include "ferrite/containers/vector_kind.hpp"

namespace ferrite {

struct object_info {
    std::string name;
    std::string kind;  // the registered name ("vector", "dfc_stack", ...), or "unknown(N)" (object_kinds.hpp)
    std::uint64_t element_size;
    std::uint64_t element_align;
    bool created;  // false: named, but its creation was interrupted by a crash (opened empty)
    std::string element_type;  // "f64", "u64", ... for built-in types, else "tag 0x..." ("" untagged)
};

// One named object's validation result (catalog::check_objects, `ferrite pool check`).
struct object_check {
    std::string name;
    std::string kind;
    std::string problem;  // empty: valid
    std::string detail;   // valid: the kind's one-line description ("12 elements, capacity 16")
};

class catalog {
public:
    using heap_type = alloc::buddy_heap;

    // The pool's catalog (created and registered on first use). Throws usage_error if the
    // heap was opened but its recover() not called (recover_pool first), or if another
    // catalog over this pool is alive in the process; damaged_pool for a damaged catalog;
    // std::bad_alloc if the heap has no room for it.
    catalog(const pmem::pool_ref& pool, heap_type& heap, alloc::directory_options options = {});
    ~catalog();
    catalog(const catalog&) = delete;
    catalog& operator=(const catalog&) = delete;

    // The object named `name`, of any registered kind (containers/object_kinds.hpp), created
    // empty if the pool has none; `args` go to its kind's make (e.g. an initial capacity and
    // options, or a DFC structure's thread count). Every call for one name returns the same
    // object while it is alive; asking for it with another type meanwhile throws
    // usage_error, as does a pool open read-only (pool::inspect: list() works there).
    // Throws pool_error(type_mismatch) if `name` holds another kind of object or another
    // element type, pool_error(unknown_kind) if a kind this build does not know, and
    // damaged_pool naming the object if it is damaged; a failed create leaves no entry.
    //   auto undo = names.open<ferrite::stack<std::uint64_t, ferrite::alloc::buddy_heap>>("undo");
    template <containers::nameable T, class... Args>
    std::shared_ptr<T> open(std::string_view name, Args&&... args) {
        using kind = containers::named_kind<T>;
        using element = typename kind::element_type;
        require_writable(name);
        require_recovered(name);
        const auto type = type_of<element>(kind::id);
        std::lock_guard guard(*lock_);
        if (auto live = find_live(name, typeid(T))) {
            auto object = std::static_pointer_cast<T>(live);
            if constexpr (requires { kind::check_shared(name, *object, args...); })
                kind::check_shared(name, *object, args...);
            return object;
        }
        auto& entry = entry_for(name, type, persistent_name_of<element>());
        const containers::named_context context{pool_, *heap_, name};
        auto object = guarded(entry, [&] {
            return std::make_shared<T>(kind::make(context, entry.anchor, std::forward<Args>(args)...));
        });
        live_.insert_or_assign(std::string(name), live_object{object, typeid(T)});
        return object;
    }

    // Thin wrappers over open<T>, for the kinds of the first releases.
    // The vector named `name` (created with `initial_capacity`).
    template <class T, class EngineSelector = containers::use_pfc>
    std::shared_ptr<vector<T, heap_type, EngineSelector>> open_vector(std::string_view name,
                                                                      std::size_t initial_capacity = 16,
                                                                      containers::vector_options opts = {}) {
        return open<vector<T, heap_type, EngineSelector>>(name, initial_capacity, opts);
    }
    // The detectable flat-combining structure named `name` (containers/dfc_kinds.hpp: thread
    // ids 0..threads-1, `initial_nodes` in its region, the node pool growing into the heap;
    // an existing one keeps its thread count: asking for more is a usage_error). After a
    // crash, each thread's ->recover(tid) tells what became of its latest operation.
    template <class T>
    std::shared_ptr<dfc_stack<T>> open_dfc_stack(std::string_view name, unsigned threads,
                                                 std::uint64_t initial_nodes = 4096, combining::dfc_options o = {}) {
        return open<dfc_stack<T>>(name, threads, initial_nodes, std::move(o));
    }
    template <class T>
    std::shared_ptr<dfc_queue<T>> open_dfc_queue(std::string_view name, unsigned threads,
                                                 std::uint64_t initial_nodes = 4096, combining::dfc_options o = {}) {
        return open<dfc_queue<T>>(name, threads, initial_nodes, std::move(o));
    }
    template <class T>
    std::shared_ptr<dfc_deque<T>> open_dfc_deque(std::string_view name, unsigned threads,
                                                 std::uint64_t initial_nodes = 4096, combining::dfc_options o = {}) {
        return open<dfc_deque<T>>(name, threads, initial_nodes, std::move(o));
    }
    // The durable hash map or set named `name` (containers/durable_map.hpp; SOFT unless
    // Algorithm is use_link_free; `o.layout` list for a sorted list). Every open rebuilds its
    // volatile index from the durable areas (o.recovery_threads threads).
    template <class K, class V, class Algorithm = use_soft>
    std::shared_ptr<durable_map<K, V, Algorithm>> open_map(std::string_view name, durable_set_options o = {}) {
        return open<durable_map<K, V, Algorithm>>(name, o);
    }
    template <class K, class Algorithm = use_soft>
    std::shared_ptr<durable_set<K, Algorithm>> open_set(std::string_view name, durable_set_options o = {}) {
        return open<durable_set<K, Algorithm>>(name, o);
    }
    template <class K, class V>
    std::shared_ptr<ordered_map<K, V>> open_ordered_map(std::string_view name, ordered_map_options o = {}) {
        return open<ordered_map<K, V>>(name, o);
    }

    // Every named object, in catalog order.
    std::vector<object_info> list() const;

    // Validate the directory, every named object (without opening or recovering it) and
    // that no heap block belongs to two objects; throws damaged_pool (or
    // pool_error(unknown_kind)) naming the first problem. Writes nothing.
    void validate() const;
    // The same, object by object, for reports: the directory's own damage still throws.
    std::vector<object_check> check_objects() const;

    // After a crash, between heap.recover() and heap.finish_recovery(): validate(), then the
    // catalog's blocks and every object it names. No structure of the pool may be in use.
    //   heap.recover(); { ferrite::catalog c(pool, heap); c.recover(); } heap.finish_recovery();
    void recover();
    // The whole sequence for a pool whose structures all live in its catalog: heap.recover(),
    // recover(), heap.finish_recovery(), then pool.mark_recovered() (close() may mark the
    // pool clean again). A pool without a catalog only recovers its heap. Call it before
    // constructing the program's catalog (it uses one of its own).
    static void recover_pool(const pmem::pool_ref& pool, heap_type& heap);

private:
    struct live_object {
        std::weak_ptr<void> object;
        std::type_index type;
    };
    std::shared_ptr<void> find_live(std::string_view name, std::type_index type);
    // Throws usage_error if the pool is open read-only: its objects can be listed, not opened.
    void require_writable(std::string_view name) const;
    // Throws usage_error unless the heap's recovery finished (open_* would fail to grow).
    void require_recovered(std::string_view name) const;

    template <class T>
    static alloc::object_type type_of(std::uint32_t kind) {
        static_assert(sizeof(T) <= 0xffffffffu, "an element type must be smaller than 4 GiB");
        return {kind, static_cast<std::uint32_t>(alignof(T)),
                static_cast<std::uint32_t>(sizeof(T)), type_tag_of<T>()};
    }
    // The entry named `name` if its kind and element type accept `type`, else a new one;
    // pool_error(type_mismatch / unknown_kind) naming both types otherwise.
    alloc::directory_entry& entry_for(std::string_view name, const alloc::object_type& type,
                                      const std::string& type_name);
    // Run `make` (create or open the object of `entry`): damage found there is rethrown
    // naming the object; any failure of a create removes the entry it had added.
    template <class F>
    auto guarded(alloc::directory_entry& entry, F make) -> decltype(make()) {
        const bool fresh = entry.anchor == 0;
        const std::string name(entry.name_view());
        try {
            return make();
        } catch (const damaged_pool& e) {
            if (fresh) directory_.remove_unpublished(entry);
            rethrow_named(e, name);
        } catch (...) {
            if (fresh) directory_.remove_unpublished(entry);
            throw;
        }
    }
    [[noreturn]] void throw_unknown_kind(const alloc::directory_entry& e) const;
    [[noreturn]] static void rethrow_named(const damaged_pool& e, const std::string& name);
    // Validation of one entry's object; appends the heap blocks it owns to `blocks`.
    void validate_object(const alloc::directory_entry& e, std::vector<std::pair<const void*, std::string>>& blocks) const;

    pmem::pool_ref pool_;
    heap_type* heap_;
    std::unique_ptr<const void, void (*)(const void*)> registration_;  // this pool's one catalog
    alloc::name_directory directory_;
    std::unique_ptr<alloc::spin_lock> lock_ = std::make_unique<alloc::spin_lock>();  // volatile
    std::map<std::string, live_object, std::less<>> live_;                // volatile
};

}  // namespace ferrite
