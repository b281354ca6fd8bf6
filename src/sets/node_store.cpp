// The durable node store (include/ferrite/sets/node_store.hpp): create, open, recovery,
// and the per-thread allocation of node slots with area growth.
#include "ferrite/sets/node_store.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <exception>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unordered_set>

#include "ferrite/alloc/spin_lock.hpp"
#include "ferrite/error.hpp"
#include "ferrite/pmem/primitives.hpp"
#include "ferrite/sets/node_store_layout.hpp"
#include "ferrite/sync/thread_id.hpp"
#include "node_store_validation.hpp"
#include "ferrite/pmem/flow.hpp"

namespace ferrite::sets {
namespace {

constexpr std::size_t refill_batch = 64;  // nodes a cache takes from the depot at once

// One thread's volatile allocation state (only the thread holding its id touches it).
struct alignas(64) thread_cache {
    node_line* bump FERRITE_FLOW_SKIP = nullptr;  // next never-used slot of the thread's current area
    node_line* end FERRITE_FLOW_SKIP = nullptr;
    std::vector<node_line*> free FERRITE_FLOW_SKIP;
};

std::string num(std::uint64_t v) { return std::to_string(v); }

std::string describe(const node_store_shape& s) {
    return "algorithm " + num(s.algorithm) + ", layout " + num(s.layout) + ", key_size " + num(s.key_size) +
           ", value_size " + num(s.value_size) + ", area_bytes " + num(s.area_bytes);
}

bool same_shape(const node_store_shape& a, const node_store_shape& b) noexcept {
    return a.algorithm == b.algorithm && a.layout == b.layout && a.key_size == b.key_size &&
           a.value_size == b.value_size && a.area_bytes == b.area_bytes;
}

}  // namespace

struct node_store::state {
    pmem::pool_ref pool;
    alloc::buddy_heap* heap = nullptr;
    std::byte* heap_base = nullptr;
    std::uint64_t heap_in_pool = 0;   // pool offset of the heap's first byte
    node_store_header* header = nullptr;
    std::uint64_t header_offset = 0;  // heap offset
    node_store_shape shape;
    std::uint64_t arena_begin = 0, arena_end = 0;  // heap offsets
    std::uint32_t nodes_per_area = 0;

    // Every area (heap offsets): the set for node_at(), the order for areas().
    mutable std::shared_mutex areas_mutex FERRITE_FLOW_SKIP;
    std::unordered_set<std::uint64_t> area_set FERRITE_FLOW_SKIP;
    std::vector<std::uint64_t> area_order FERRITE_FLOW_SKIP;
    std::atomic<std::size_t> slots FERRITE_FLOW_SKIP{0};

    std::array<alloc::spin_lock, area_list_count> list_locks FERRITE_FLOW_SKIP;
    std::array<std::atomic<thread_cache*>, sync::max_thread_ids> caches FERRITE_FLOW_SKIP{};
    std::mutex depot_mutex FERRITE_FLOW_SKIP;
    std::vector<node_line*> depot FERRITE_FLOW_SKIP;

    state(const pmem::pool_ref& p, alloc::buddy_heap& h, const detail::checked_store& c, const node_store_shape& sh)
        : pool(p), heap(&h), heap_base(h.base()), heap_in_pool(detail::heap_in_pool(p, h)), header(c.header),
          header_offset(c.header_offset), shape(sh), arena_begin(h.geometry().arena_offset),
          arena_end(h.geometry().arena_offset + h.geometry().arena_size),
          nodes_per_area(static_cast<std::uint32_t>(sh.area_bytes / node_size - 1)) {
        for (const auto off : c.areas) add_area(off);
    }
    state(const state&) = delete;
    state& operator=(const state&) = delete;
    ~state() {
        for (auto& c : caches) delete c.load(std::memory_order_relaxed);
    }

    thread_cache& cache() {
        auto& slot = caches[sync::this_thread_id()];
        if (auto* c = slot.load(std::memory_order_acquire)) return *c;
        auto* fresh = new thread_cache;
        thread_cache* expected = nullptr;
        if (!slot.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) {
            delete fresh;
            return *expected;
        }
        return *fresh;
    }

    void add_area(std::uint64_t off) {
        std::unique_lock guard(areas_mutex);
        area_set.insert(off);
        area_order.push_back(off);
        slots.fetch_add(nodes_per_area, std::memory_order_relaxed);
    }

    node_line* first_slot(std::uint64_t off) const noexcept {
        return reinterpret_cast<node_line*>(heap_base + off + node_size);
    }

    // A new area on list this_thread_id() % area_list_count, its slots handed to `c`.
    FERRITE_FLOW_ROOT void grow(thread_cache& c) {
        const unsigned list = sync::this_thread_id() % area_list_count;
        void* block = heap->allocate(shape.area_bytes);  // pending until confirmed; may throw
        const std::uint64_t off = heap->offset_of(block);
        auto* slots_begin = first_slot(off);
        for (std::uint32_t i = 0; i < nodes_per_area; ++i) slots_begin[i] = shape.blank_node;
        pmem::pwb_range(slots_begin, std::size_t{nodes_per_area} * node_size);
        {
            // Only threads whose ids share the list wait here; the lock's wait loop calls
            // pmem::wait_hint(), so it may be held across persistence instructions.
            std::lock_guard guard(list_locks[list]);
            auto* a = static_cast<area_header*>(block);
            *a = area_header{area_magic, header_offset, header->heads[list], list, nodes_per_area, 0};
            a->checksum = a->compute_checksum();
            pmem::pwb(a);
            pmem::pfence();  // PP: the whole area (line 0 and every slot) durable before it is linked
            header->heads[list] = off;  // LP/PP of the growth: recovery reaches the area
            pmem::pwb(&header->heads[list]);
            pmem::pfence();  // PP: linked durably before the heap forgets its pending slot
        }
        try {
            heap->confirm_allocation(block);
        } catch (...) {
            // Cannot happen for a block just allocated; if it did, the area stays pending and
            // the next recover() confirms it.
        }
        add_area(off);
        c.bump = slots_begin;
        c.end = slots_begin + nodes_per_area;
    }
};

node_store::node_store(std::unique_ptr<state> s) : state_(std::move(s)) {}
node_store::node_store(node_store&&) noexcept = default;
node_store& node_store::operator=(node_store&&) noexcept = default;
node_store::~node_store() = default;

FERRITE_FLOW_ROOT node_store node_store::create(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t& anchor,
                              const node_store_shape& shape) {
    if (!std::has_single_bit(shape.area_bytes) || shape.area_bytes < min_area_bytes ||
        shape.area_bytes > heap.max_allocation())
        throw usage_error("node_store: area_bytes " + num(shape.area_bytes) + " must be a power of two from " +
                          num(min_area_bytes) + " to the heap's largest block (" + num(heap.max_allocation()) + ")");
    if (std::uint64_t{shape.key_size} + shape.value_size > node_size)
        throw usage_error("node_store: key_size + value_size must fit in a node of " + num(node_size) + " bytes");
    const std::uint64_t in_pool = detail::heap_in_pool(pool, heap);
    void* block = heap.allocate(sizeof(node_store_header));  // pending; may throw (nothing allocated)
    auto* h = static_cast<node_store_header*>(block);
    std::memset(static_cast<void*>(h), 0, sizeof(node_store_header));
    auto& id = h->identity;
    id.magic = node_store_magic;
    id.version = node_store_version;
    id.list_count = area_list_count;
    id.algorithm = shape.algorithm;
    id.layout = shape.layout;
    id.key_size = shape.key_size;
    id.value_size = shape.value_size;
    id.area_bytes = shape.area_bytes;
    id.checksum = id.compute_checksum();
    pmem::pwb_range(h, sizeof(node_store_header));
    pmem::pfence();  // PP: the header complete before the anchor names it
    FERRITE_FLOW_SENTINEL_AT(&anchor); anchor = in_pool + heap.offset_of(block);  // the commit point
    pmem::pwb(&anchor);
    pmem::pfence();  // PP: the anchor durable before the heap forgets its pending slot
    heap.confirm_allocation(block);
    detail::checked_store c;
    c.header = h;
    c.header_offset = heap.offset_of(block);
    return node_store(std::make_unique<state>(pool, heap, c, shape));
}

node_store node_store::open(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t anchor,
                            const node_store_shape& expected) {
    const auto c = detail::check_store(pool, heap, anchor);
    if (!same_shape(c.shape, expected))
        throw pool_error(pool_errc::type_mismatch, "node_store at pool offset " + num(anchor) + " of '" +
                                                       pool.path().string() + "' holds " + describe(c.shape) +
                                                       "; expected " + describe(expected));
    return node_store(std::make_unique<state>(pool, heap, c, expected));
}

std::vector<std::uint64_t> node_store::validate(const pmem::pool_ref& pool, const alloc::buddy_heap& heap,
                                                std::uint64_t anchor) {
    const auto c = detail::check_store(pool, heap, anchor);
    const std::uint64_t in_pool = detail::heap_in_pool(pool, heap);
    std::vector<std::uint64_t> owned{in_pool + c.header_offset};
    for (const auto off : c.areas) owned.push_back(in_pool + off);
    return owned;
}

node_store_shape node_store::recorded_shape(const pmem::pool_ref& pool, const alloc::buddy_heap& heap,
                                            std::uint64_t anchor) {
    return detail::check_store(pool, heap, anchor).shape;
}

void node_store::recover(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t anchor) {
    const auto c = detail::check_store(pool, heap, anchor);
    for (const auto off : c.pending) heap.confirm_allocation(heap.at(off));
}

node_line* node_store::allocate() {
    auto& s = *state_;
    auto& c = s.cache();
    if (!c.free.empty()) {
        auto* n = c.free.back();
        c.free.pop_back();
        return n;
    }
    if (c.bump == c.end) {
        {
            std::lock_guard guard(s.depot_mutex);
            const std::size_t take = std::min(refill_batch, s.depot.size());
            c.free.insert(c.free.end(), s.depot.end() - static_cast<std::ptrdiff_t>(take), s.depot.end());
            s.depot.resize(s.depot.size() - take);
        }
        if (!c.free.empty()) {
            auto* n = c.free.back();
            c.free.pop_back();
            return n;
        }
        s.grow(c);
    }
    return c.bump++;
}

void node_store::free(node_line* node) { state_->cache().free.push_back(node); }

void node_store::add_free(std::span<node_line* const> nodes) {
    auto& s = *state_;
    std::lock_guard guard(s.depot_mutex);
    s.depot.insert(s.depot.end(), nodes.begin(), nodes.end());
}

std::vector<area_view> node_store::areas() const {
    const auto& s = *state_;
    std::shared_lock guard(s.areas_mutex);
    std::vector<area_view> v;
    v.reserve(s.area_order.size());
    for (const auto off : s.area_order) v.push_back({s.first_slot(off), s.nodes_per_area});
    return v;
}

void node_store::scan_parallel(unsigned threads, const std::function<void(const area_view&)>& fn) const {
    const auto all = areas();
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    threads = static_cast<unsigned>(std::min<std::size_t>(threads, all.size()));
    if (threads <= 1) {
        for (const auto& a : all) fn(a);
        return;
    }
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::mutex error_mutex;
    std::exception_ptr error;
    auto work = [&] {
        try {
            for (std::size_t i; !failed.load(std::memory_order_relaxed) &&
                                (i = next.fetch_add(1, std::memory_order_relaxed)) < all.size();)
                fn(all[i]);
        } catch (...) {
            std::lock_guard guard(error_mutex);
            if (!error) error = std::current_exception();
            failed.store(true, std::memory_order_relaxed);
        }
    };
    std::vector<std::thread> workers;
    workers.reserve(threads - 1);
    try {
        for (unsigned t = 1; t < threads; ++t) workers.emplace_back(work);
    } catch (...) {
        failed.store(true, std::memory_order_relaxed);
        for (auto& w : workers) w.join();
        throw;
    }
    work();  // the calling thread is worker 0
    for (auto& w : workers) w.join();
    if (error) std::rethrow_exception(error);
}

node_line* node_store::node_at(std::uint64_t pool_offset) const noexcept {
    const auto& s = *state_;
    if (pool_offset < s.heap_in_pool) return nullptr;
    const std::uint64_t h = pool_offset - s.heap_in_pool;
    if (h < s.arena_begin || h >= s.arena_end) return nullptr;
    const std::uint64_t base = s.arena_begin + ((h - s.arena_begin) & ~std::uint64_t{s.shape.area_bytes - 1});
    const std::uint64_t within = h - base;
    if (within < node_size || within % node_size != 0) return nullptr;
    {
        std::shared_lock guard(s.areas_mutex);
        if (!s.area_set.contains(base)) return nullptr;
    }
    return reinterpret_cast<node_line*>(s.heap_base + h);
}

std::uint64_t node_store::pool_offset_of(const node_line* node) const noexcept {
    return static_cast<std::uint64_t>(reinterpret_cast<const std::byte*>(node) - state_->pool.base());
}

const node_store_shape& node_store::shape() const noexcept { return state_->shape; }

std::size_t node_store::capacity() const noexcept { return state_->slots.load(std::memory_order_relaxed); }

}  // namespace ferrite::sets
