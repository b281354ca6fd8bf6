// crash/containers/catalog_target.cpp: crash target `catalog`, named vectors in a pool.
//
// Workload: the pool has a buddy heap and no catalog. Each thread's operation i opens the
// vector "t<tid>-<i>" through one shared ferrite::catalog (the first operation creates the
// catalog itself, and its blocks hold 3 entries here, so the chain grows all the time),
// then pushes two values into it (capacity 1: the second grows the array). So crashes land
// in directory creation and registration, block growth and linking, entry commits, vector
// creation (anchor in the directory entry), pushes and array replacement.
//
// Recovery: ferrite::catalog::recover_pool (heap.recover, catalog recover, finish_recovery).
// Checker:
//   * the heap is consistent and every live block is a directory block or the header or
//     array of a vector the directory names: nothing leaked, nothing pending;
//   * every operation that returned: its name is in the catalog, created, holding exactly
//     its two values;
//   * the operation in flight at the crash: absent, named but not created, or holding a
//     prefix of its two values; operations never invoked: absent; no other name.
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

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
    return (std::uint64_t{tid} + 1) << 40 | i << 1 | k;
}

class catalog_workload final : public sim::workload {
public:
    catalog_workload(pmem::pool& p, const sim::run_config& c)
        : config_(c), progress_(c.threads), pool_(&p),
          heap_(heap_type::create(p, heap_offset(p, heap_bytes(c)), heap_bytes(c))) {}

    void run_thread(unsigned tid) override {
        for (std::uint64_t i = 0; i < config_.ops_per_thread; ++i) {
            progress_.begin(tid);
            auto v = names().open_vector<std::uint64_t>(name_of(tid, i), 1);
            v->push_back(value_of(tid, i, 0));
            v->push_back(value_of(tid, i, 1));  // grows the array: REPLACE and a deallocation
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
                const auto* h = containers::vector_header_at(image, e.anchor);
                owned.insert(h);
                if (h->data != 0) owned.insert(image.base() + h->data);
                const auto* data = reinterpret_cast<const std::uint64_t*>(image.base() + h->data);
                // The vector must hold a prefix of its two pushes: all of it if the operation returned.
                bool prefix = h->size <= 2;
                for (std::uint64_t k = 0; prefix && k < h->size; ++k) prefix = data[k] == value_of(tid, i, unsigned(k));
                if (!prefix || (i < p.completed && h->size != 2))
                    return quoted(name) + " holds " + std::to_string(h->size) + " elements, not its pushes";
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
                       " is neither a catalog block nor a named vector's";
        }
        return {};
    }

private:
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
    // Mutation scope: the catalog's own code and the pool header word it registers; the
    // heap's and the vector's sites are answered for by the alloc and vector-* targets.
    r.add(std::make_unique<sim::simple_target>(
        sim::simple_target(
            "catalog", "named vectors: catalog creation and growth, named create, pushes; buddy heap",
            [](pmem::pool& p, const sim::run_config& c) { return std::make_unique<catalog_workload>(p, c); },
            [](const sim::run_config& c) { return pool_bytes(c); })
            .with_mutation_scope({"src/alloc/name_directory.cpp", "src/containers/catalog.cpp", "src/pmem/pool.cpp"})));
}

}  // namespace ferrite::crash
