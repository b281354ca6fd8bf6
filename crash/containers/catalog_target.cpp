// crash/containers/catalog_target.cpp: crash target `catalog`, named objects of every kind
// in a pool, opened through the catalog's generic open<T>.
//
// Workload: the pool has a buddy heap and no catalog. Each thread's operation i opens the
// object "t<tid>-<i>" through one shared ferrite::catalog (the first operation creates the
// catalog itself, and its blocks hold 3 entries here, so the chain grows all the time),
// its kind rotating with i: a vector, a dfc_stack, a PFC stack, a PFC queue, a PFC deque, an
// ordered_map (the InCLL tree in one 16 KiB block; two inserts, each followed by a sync).
// Into a vector, stack, queue or deque (capacity 1) it pushes two values: the second grows
// the array or ring. Into a dfc_stack with 2 nodes it pushes three: the third grows its node
// pool into the heap. So crashes land in directory creation and registration, block growth
// and linking, entry commits, the creation of every kind (anchor in the directory entry),
// pushes, array and ring replacement and node-pool growth.
//
// Recovery: ferrite::catalog::recover_pool (heap.recover, catalog recover, finish_recovery).
// Checker:
//   * the heap is consistent and every live block is a directory block or one that a named
//     object owns (its kind's registered validate, object_kinds.hpp, lists them): nothing
//     leaked, nothing pending;
//   * every entry has the kind its operation opened;
//   * every operation that returned: its name is in the catalog, created, holding exactly
//     its values;
//   * the operation in flight at the crash: absent, named but not created, or holding a
//     prefix of its values; operations never invoked: absent; no other name.
#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/alloc/spin_lock.hpp"
#include "ferrite/containers/catalog.hpp"
#include "ferrite/containers/deque_recovery.hpp"
#include "ferrite/containers/vector_recovery.hpp"
#include "targets.hpp"

namespace ferrite::crash {
namespace {

using heap_type = alloc::buddy_heap;
// About 3.5 KiB of heap per operation (a 2 KiB vector header block, its array, a third of
// a 4 KiB directory block), and a 16 KiB block for every sixth (an ordered_map), rounded up
// to a power of two for the buddy heap.
std::uint64_t heap_bytes(const sim::run_config& c) {
    std::uint64_t bytes = 64 * 1024;
    while (bytes < c.threads * c.ops_per_thread * (4096 + 16384 / 6 + 1) + 64 * 1024) bytes *= 2;
    return bytes;
}
std::uint64_t pool_bytes(const sim::run_config& c) { return heap_bytes(c) + 64 * 1024; }

std::string name_of(unsigned tid, std::uint64_t i) {
    std::string s = "t";
    s += std::to_string(tid);
    s += '-';
    s += std::to_string(i);
    return s;
}
// 'name' (built with +=: GCC 12 reports a false -Wrestrict for "'" + std::string at -O3).
std::string quoted(const std::string& name) {
    std::string s = "'";
    s += name;
    s += '\'';
    return s;
}
std::uint64_t value_of(unsigned tid, std::uint64_t i, unsigned k) {
    return (std::uint64_t{tid} + 1) << 40 | i << 2 | k;
}
enum class shape { vector, dfc_stack, stack, queue, deque, ordered_map };
shape shape_of(std::uint64_t i) { return static_cast<shape>(i % 6); }
unsigned pushes_of(std::uint64_t i) { return shape_of(i) == shape::dfc_stack ? 3 : 2; }
using named_dfc_stack = dfc_stack<std::uint64_t>;
using named_vector = vector<std::uint64_t, alloc::buddy_heap>;
using named_stack = stack<std::uint64_t, alloc::buddy_heap>;
using named_queue = queue<std::uint64_t, alloc::buddy_heap>;
using named_deque = deque<std::uint64_t, alloc::buddy_heap>;
using named_ordered_map = ordered_map<std::uint64_t, std::uint64_t>;
ordered_map_options small_tree() {
    ordered_map_options o;
    o.nodes = 4;
    o.epoch_length = std::chrono::milliseconds(0);  // epochs end at sync() only
    o.shards = 1;
    o.log_entries = 24;
    return o;
}
std::uint32_t kind_of(std::uint64_t i) {
    switch (shape_of(i)) {
        case shape::vector: return containers::named_kind<named_vector>::id;
        case shape::dfc_stack: return containers::named_kind<named_dfc_stack>::id;
        case shape::stack: return containers::named_kind<named_stack>::id;
        case shape::queue: return containers::named_kind<named_queue>::id;
        case shape::deque: return containers::named_kind<named_deque>::id;
        case shape::ordered_map: return containers::named_kind<named_ordered_map>::id;
    }
    return 0;
}
combining::dfc_options dfc_growth() {
    combining::dfc_options o;
    o.first_growth_nodes = 1;
    return o;
}

class catalog_workload final : public sim::workload {
public:
    catalog_workload(pmem::pool& p, const sim::run_config& c)
        : config_(c), progress_(c.threads), pool_(&p),
          heap_(heap_type::create(p, heap_offset(p, heap_bytes(c)), heap_bytes(c))) {}

    void run_thread(unsigned tid) override {
        for (std::uint64_t i = 0; i < config_.ops_per_thread; ++i) {
            progress_.begin(tid);
            const auto name = name_of(tid, i);
            const auto a = value_of(tid, i, 0), b = value_of(tid, i, 1);  // the second push grows
            switch (shape_of(i)) {
                case shape::vector: {
                    auto v = names().open<named_vector>(name, 1);
                    v->push_back(a);
                    v->push_back(b);  // REPLACE and a deallocation
                    break;
                }
                case shape::dfc_stack: {
                    auto s = names().open<named_dfc_stack>(name, 1, 2, dfc_growth());
                    for (unsigned k = 0; k < 3; ++k) s->push(0, value_of(tid, i, k));  // the third grows
                    break;
                }
                case shape::stack: {
                    auto s = names().open<named_stack>(name, 1);
                    s->push(a);
                    s->push(b);
                    break;
                }
                case shape::queue: {
                    auto q = names().open<named_queue>(name, 1);
                    q->push(a);
                    q->push(b);
                    break;
                }
                case shape::deque: {
                    auto d = names().open<named_deque>(name, 1);
                    d->push_back(a);
                    d->push_back(b);
                    break;
                }
                case shape::ordered_map: {  // keys in push order (a < b), each durable at its sync
                    auto m = names().open<named_ordered_map>(name, small_tree());
                    m->insert(a, a);
                    m->sync();
                    m->insert(b, b);
                    m->sync();
                    break;
                }
            }
            progress_.end(tid);
        }
    }

    const sim::op_progress& progress() const noexcept override { return progress_; }

    void recover(pmem::pool& image) const override {
        auto heap = heap_type::open(image, image.heap_offset());
        catalog::recover_pool(image, heap);
    }

    std::string verify(pmem::pool& image, const sim::progress_snapshot& at_crash) const override {
        auto heap = heap_type::open(image, image.heap_offset());
        if (auto problems = heap.check(); !problems.empty()) return "heap inconsistent: " + problems.front();
        std::set<const void*> owned;  // every block something durable refers to
        std::set<std::string> found;
        if (image.catalog_offset() != 0) {
            auto dir = alloc::name_directory::open_or_create(image, heap);
            for (const void* b : dir.blocks()) owned.insert(b);
            for (const auto& e : dir.entries()) {
                const std::string name(e.name_view());
                found.insert(name);
                unsigned tid = 0;
                std::uint64_t i = 0;
                if (std::sscanf(name.c_str(), "t%u-%lu", &tid, &i) != 2 || tid >= config_.threads ||
                    name != name_of(tid, i))
                    return "the catalog holds a name no thread used: " + quoted(name);
                const auto& p = at_crash[tid];
                if (i > p.completed || (i == p.completed && !p.pending))
                    return quoted(name) + " is in the catalog, but its operation was never invoked";
                if (e.kind != kind_of(i))
                    return quoted(name) + " is a " + containers::kind_name(e.kind) + ", not the " +
                           containers::kind_name(kind_of(i)) + " its operation opened";
                if (e.anchor == 0) {
                    if (i < p.completed) return quoted(name) + " returned but its object was never created";
                    continue;
                }
                std::vector<std::uint64_t> blocks;
                try {
                    blocks = containers::find_kind(e.kind)->validate(image, heap, e);
                } catch (const std::exception& x) {
                    return quoted(name) + " is damaged: " + x.what();
                }
                for (const auto off : blocks) owned.insert(image.base() + off);
                const auto held = contents(image, heap, shape_of(i), e.anchor);
                // It must hold a prefix of its pushes: all of them if the operation returned.
                bool prefix = held.size() <= pushes_of(i);
                for (std::size_t k = 0; prefix && k < held.size(); ++k) prefix = held[k] == value_of(tid, i, unsigned(k));
                if (!prefix || (i < p.completed && held.size() != pushes_of(i)))
                    return quoted(name) + " holds " + std::to_string(held.size()) + " elements, not its pushes";
            }
        }
        for (unsigned t = 0; t < config_.threads; ++t)
            for (std::uint64_t i = 0; i < at_crash[t].completed; ++i)
                if (!found.contains(name_of(t, i))) return quoted(name_of(t, i)) + " returned but is not in the catalog";
        for (const auto& b : heap.blocks()) {
            if (b.state == alloc::block_state::free) continue;
            if (b.state != alloc::block_state::live)
                return std::string("a block is still ") + alloc::to_string(b.state) + " after recovery";
            if (!owned.contains(heap.at(b.offset)))
                return "leak: the live block at heap offset " + std::to_string(b.offset) +
                       " is neither a catalog block nor a named object's";
        }
        return {};
    }

private:
    // A named object's elements (at most 3 read, in push order), after its validation.
    static std::vector<std::uint64_t> contents(pmem::pool& image, heap_type& heap, shape kind, std::uint64_t anchor) {
        switch (kind) {
            case shape::vector:
            case shape::stack: {  // a stack is stored as a vector
                const auto* h = containers::vector_header_at(image, anchor);
                const auto* data = reinterpret_cast<const std::uint64_t*>(image.base() + h->data);
                return {data, data + std::min<std::uint64_t>(containers::vector_size(*h), 3)};
            }
            case shape::queue:
            case shape::deque: {  // a queue is stored as a deque
                const auto* h = containers::deque_header_at(image, anchor);
                const auto& state = containers::deque_committed(*h);
                const auto* ring = reinterpret_cast<const std::uint64_t*>(image.base() + h->data);
                std::vector<std::uint64_t> out;
                for (std::uint64_t k = 0; k < std::min<std::uint64_t>(state.size, 3); ++k)
                    out.push_back(ring[(state.head + k) & (h->capacity - 1)]);
                return out;
            }
            case shape::ordered_map: {  // the tree recovers itself at open (the kind's recover only checks)
                auto m = named_ordered_map::open(image, heap, anchor, small_tree());
                std::vector<std::uint64_t> out;
                m.scan(0, 3, [&](std::uint64_t k, std::uint64_t v) { out.push_back(k == v ? k : ~k); });
                return out;
            }
            case shape::dfc_stack: {
                void* region = image.base() + anchor;
                combining::dfc_options o;
                o.grow_from = &heap;
                const auto top_first = named_dfc_stack::open(region, heap.block_size(region), o).unsynchronized_contents();
                return {top_first.rbegin(), top_first.rend()};
            }
        }
        return {};
    }

    static std::uint64_t heap_offset(pmem::pool& p, std::uint64_t bytes) {
        return static_cast<std::uint64_t>(static_cast<std::byte*>(p.root_bytes(bytes)) - p.base());
    }
    catalog& names() {
        std::lock_guard guard(lock_);  // spins with wait_hint: the simulator's scheduler may switch
        if (!catalog_) catalog_.emplace(*pool_, heap_, alloc::directory_options{.entries_per_block = 3});
        return *catalog_;
    }

    sim::run_config config_;
    sim::op_progress progress_;
    pmem::pool* pool_;
    heap_type heap_;
    alloc::spin_lock lock_;
    std::optional<catalog> catalog_;
};

}  // namespace

void register_catalog_targets(sim::target_registry& r) {
    // Mutation scope: the catalog's own code, the pool roots entry it registers, and the
    // containers' create commit (publish.hpp: no other target reaches it, the others create
    // their structure before the session); the heap's, the vector's and the DFC engine's
    // sites are answered for by the alloc, vector-* and dfc-* targets.
    r.add(std::make_unique<sim::simple_target>(
        sim::simple_target(
            "catalog",
            "named objects of every kind: catalog creation and growth, named create, pushes; buddy heap",
            [](pmem::pool& p, const sim::run_config& c) { return std::make_unique<catalog_workload>(p, c); },
            [](const sim::run_config& c) { return pool_bytes(c); })
            .with_mutation_scope({"src/alloc/name_directory.cpp", "src/containers/catalog.cpp", "src/pmem/pool.cpp",
                                  "include/ferrite/containers/publish.hpp"})));
}

}  // namespace ferrite::crash
