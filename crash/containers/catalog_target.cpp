// crash/containers/catalog_target.cpp: crash target `catalog`, named vectors and DFC stacks
// in a pool.
//
// Workload: the pool has a buddy heap and no catalog. Each thread's operation i opens the
// object "t<tid>-<i>" through one shared ferrite::catalog (the first operation creates the
// catalog itself, and its blocks hold 3 entries here, so the chain grows all the time):
// for even i a vector, into which it pushes two values (capacity 1: the second grows the
// array); for odd i a dfc_stack with 2 nodes, into which it pushes three (the third grows
// its node pool into the heap). So crashes land in directory creation and registration,
// block growth and linking, entry commits, vector and DFC creation (anchor in the
// directory entry), pushes, array replacement and node-pool growth.
//
// Recovery: ferrite::catalog::recover_pool (heap.recover, catalog recover, finish_recovery).
// Checker:
//   * the heap is consistent and every live block is a directory block, the header or
//     array of a vector the directory names, or the region or a node chunk of a DFC stack
//     it names: nothing leaked, nothing pending;
//   * every operation that returned: its name is in the catalog, created, holding exactly
//     its values;
//   * the operation in flight at the crash: absent, named but not created, or holding a
//     prefix of its values; operations never invoked: absent; no other name.
#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/alloc/spin_lock.hpp"
#include "ferrite/containers/catalog.hpp"
#include "ferrite/containers/vector_recovery.hpp"
#include "targets.hpp"

namespace ferrite::crash {
namespace {

using heap_type = alloc::buddy_heap;
// About 3.5 KiB of heap per operation (a 2 KiB vector header block, its array, a third of
// a 4 KiB directory block), rounded up to a power of two for the buddy heap.
std::uint64_t heap_bytes(const sim::run_config& c) {
    std::uint64_t bytes = 64 * 1024;
    while (bytes < c.threads * c.ops_per_thread * 4096 + 64 * 1024) bytes *= 2;
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
bool is_dfc(std::uint64_t i) { return i % 2 == 1; }
unsigned pushes_of(std::uint64_t i) { return is_dfc(i) ? 3 : 2; }
using named_stack = dfc_stack<std::uint64_t>;
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
            if (is_dfc(i)) {
                auto s = names().open_dfc_stack<std::uint64_t>(name_of(tid, i), 1, 2, dfc_growth());
                for (unsigned k = 0; k < 3; ++k) s->push(0, value_of(tid, i, k));  // the third grows
            } else {
                auto v = names().open_vector<std::uint64_t>(name_of(tid, i), 1);
                v->push_back(value_of(tid, i, 0));
                v->push_back(value_of(tid, i, 1));  // grows the array: REPLACE and a deallocation
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
                if (e.anchor == 0) {
                    if (i < p.completed) return quoted(name) + " returned but its vector was never created";
                    continue;
                }
                const auto held = is_dfc(i) ? dfc_contents(image, heap, e.anchor, owned)
                                            : vector_contents(image, e.anchor, owned);
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
    // A named vector's elements (at most 3 read); its blocks go to `owned`.
    static std::vector<std::uint64_t> vector_contents(pmem::pool& image, std::uint64_t anchor,
                                                      std::set<const void*>& owned) {
        const auto* h = containers::vector_header_at(image, anchor);
        owned.insert(h);
        if (h->data != 0) owned.insert(image.base() + h->data);
        const auto* data = reinterpret_cast<const std::uint64_t*>(image.base() + h->data);
        return {data, data + std::min<std::uint64_t>(h->size, 3)};
    }
    // A named DFC stack's elements, bottom first; its region and node chunks go to `owned`.
    static std::vector<std::uint64_t> dfc_contents(pmem::pool& image, heap_type& heap, std::uint64_t anchor,
                                                   std::set<const void*>& owned) {
        void* region = image.base() + anchor;
        owned.insert(region);
        combining::dfc_options o;
        o.grow_from = &heap;
        const auto s = named_stack::open(region, heap.block_size(region), o);
        const auto* chunks = combining::dfc_region::at(region, s.engine().threads()).chunks;
        for (auto off : chunks->offset)
            if (off != 0) owned.insert(heap.at(off));
        auto top_first = s.unsynchronized_contents();
        return {top_first.rbegin(), top_first.rend()};
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
    // Mutation scope: the catalog's own code, the pool header word it registers, and the
    // containers' create commit (publish.hpp: no other target reaches it, the others create
    // their structure before the session); the heap's, the vector's and the DFC engine's
    // sites are answered for by the alloc, vector-* and dfc-* targets.
    r.add(std::make_unique<sim::simple_target>(
        sim::simple_target(
            "catalog", "named vectors: catalog creation and growth, named create, pushes; buddy heap",
            [](pmem::pool& p, const sim::run_config& c) { return std::make_unique<catalog_workload>(p, c); },
            [](const sim::run_config& c) { return pool_bytes(c); })
            .with_mutation_scope({"src/alloc/name_directory.cpp", "src/containers/catalog.cpp", "src/pmem/pool.cpp",
                                  "include/ferrite/containers/publish.hpp"})));
}

}  // namespace ferrite::crash
