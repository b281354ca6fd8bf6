// crash/sets/node_store_target.cpp: the durable node store (ferrite/sets/node_store.hpp)
// under the use the durable sets make of it.
//
// Root: one line {heap offset, anchor A, anchors B_0..B_5}, then the heap. Store A (4 KiB
// areas, 63 slots each) is created before the run. Thread t's operation i is drawn from
// (seed, t, i) and the thread's own count of held slots, never from addresses, so the
// checker can replay which slots each thread holds:
//   create (operation 0 of threads 0..5): node_store::create of the thread's store B_t:
//                 the create's commit (header durable before the anchor, anchor durable
//                 before the header's confirmation) is under test only where it runs
//                 observed, here
//   allocate:     n = A.allocate() (growing an area when the thread's cache and the shared
//                 depot are empty); n := marker(seed, t, i); pwb; pfence  (PP: the marker
//                 is durable when the operation returns). The marker's first word says
//                 "being written" until the rest is stored: random crash moments stop a
//                 thread between two stores to the line.
//   free:         a held slot back to the thread's free list (free) or to the shared depot
//                 (add_free): volatile, no persistence instruction; a later allocation (of
//                 any thread, through the depot) may overwrite its marker, even before the
//                 free returns
//
// recover(): open the heap, recover() it; node_store::recover() of A and of every anchored
// B_t; finish_recovery().
//
// Checker: the heap's check() finds nothing; the heap's blocks that are not free are exactly
// the headers and areas node_store::validate() returns for A and the B_t (nothing leaked,
// every area reachable), all live (nothing pending); B_t is anchored if thread t's create
// returned; every slot of every area of A holds blank_node, a marker being written (at most
// one per pending allocation) or a well-formed marker of an allocation that had been
// invoked, no marker twice; every slot a thread held at the crash (its returned allocations
// minus its returned frees and its pending free) holds that allocation's marker.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/pmem/primitives.hpp"
#include "ferrite/sets/node_store.hpp"
#include "ferrite/sim/rng.hpp"
#include "sets_targets.hpp"

namespace ferrite::crash::sets_targets {
namespace {

using ferrite::alloc::block_state;
using ferrite::alloc::buddy_heap;
using ferrite::sets::node_line;
using ferrite::sets::node_store;

constexpr std::uint64_t marker_magic = 0x52454b52414d534eull;   // "NSMARKER"
constexpr std::uint64_t writing_magic = 0x474e495449525753ull;  // "SWRITING"
constexpr std::uint32_t area_bytes = 4096;
constexpr unsigned creators = 6;  // threads 0..5 begin with a create

sets::node_store_shape shape_of(std::uint32_t algorithm) {
    sets::node_store_shape s;
    s.algorithm = algorithm;
    s.layout = 1;
    s.key_size = 8;
    s.value_size = 8;
    s.area_bytes = area_bytes;
    std::memset(s.blank_node.bytes, 0x5b, sizeof s.blank_node.bytes);  // not zero: fresh memory is
    return s;
}

struct root_line {
    std::uint64_t heap_offset;  // pool offset of the heap region
    std::uint64_t anchor_a;     // pool offset of store A's header
    std::uint64_t anchor_b[6];  // of thread t's store B_t, 0 until its create commits
};

struct marker {
    std::uint64_t magic;
    std::uint64_t tid;
    std::uint64_t op;
    std::uint64_t stamp;  // mix(seed, tid, op)
    std::uint64_t check[4];  // stamp ^ k
};
static_assert(sizeof(marker) == sizeof(node_line));

std::uint64_t mixed(std::uint64_t seed, std::uint64_t tid, std::uint64_t op) noexcept {
    return sim::mix(seed, (tid << 40) ^ op) | 1;
}

marker marker_for(std::uint64_t seed, std::uint64_t tid, std::uint64_t op) noexcept {
    marker m{marker_magic, tid, op, mixed(seed ^ 0x9e37, tid, op), {}};
    for (std::uint64_t k = 0; k < 4; ++k) m.check[k] = m.stamp ^ (k + 1);
    return m;
}

// A crash may stop a thread between any two of its stores (random moments), and the line
// may reach the media so: the magic word says "being written" until every other word is.
void write_marker(node_line* n, const marker& m) noexcept {
    auto& magic = *reinterpret_cast<std::uint64_t*>(n);
    std::atomic_ref<std::uint64_t>(magic).store(writing_magic, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    std::memcpy(n->bytes + 8, reinterpret_cast<const std::byte*>(&m) + 8, sizeof m - 8);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    std::atomic_ref<std::uint64_t>(magic).store(marker_magic, std::memory_order_relaxed);
}

enum class op_kind { create, allocate, free, add_free };

struct planned_op {
    op_kind kind = op_kind::allocate;
    std::size_t index = 0;  // free / add_free: the held slot given back (position in `held`)
};

// Thread `tid`'s operations, and the operations whose slots it holds after each.
class replay {
public:
    replay(std::uint64_t seed, unsigned tid) : seed_(seed), tid_(tid) {}

    planned_op next() {
        planned_op p;
        const auto r = mixed(seed_, tid_, op_);
        if (tid_ < creators && op_ == 0) {
            p.kind = op_kind::create;
        } else if (held_.empty() || (r >> 1) % 5 != 0) {
            p.kind = op_kind::allocate;
            held_.push_back(op_);
        } else {
            p.kind = (r >> 16) & 1 ? op_kind::free : op_kind::add_free;
            p.index = (r >> 8) % held_.size();
            held_.erase(held_.begin() + static_cast<std::ptrdiff_t>(p.index));
        }
        ++op_;
        return p;
    }
    const std::vector<std::uint64_t>& held() const noexcept { return held_; }  // allocating ops

private:
    std::uint64_t seed_;
    unsigned tid_;
    std::uint64_t op_ = 0;
    std::vector<std::uint64_t> held_;
};

// A heap that the run cannot exhaust: every allocation may take a fresh slot.
std::uint64_t heap_bytes(const sim::run_config& c) {
    const std::uint64_t areas = std::uint64_t{c.threads} * (c.ops_per_thread / 63 + 2) + 2;
    return 2 * areas * area_bytes + 16384;
}
std::uint64_t root_bytes(const sim::run_config& c) { return 64 + heap_bytes(c); }

class node_store_workload final : public sim::workload {
public:
    node_store_workload(pmem::pool& p, const sim::run_config& c) : config_(c), progress_(c.threads), pool_(p) {
        auto* root = static_cast<std::byte*>(p.root_bytes(root_bytes(c)));
        root_ = reinterpret_cast<root_line*>(root);
        root_->heap_offset = static_cast<std::uint64_t>(root - p.base()) + 64;
        heap_.reset(new buddy_heap(buddy_heap::create(p, root_->heap_offset, heap_bytes(c))));
        store_.emplace(node_store::create(p, *heap_, root_->anchor_a, shape_of(1)));
        pmem::pwb(root_);
        pmem::pfence();
    }

    void run_thread(unsigned tid) override {
        replay plan(config_.seed, tid);
        std::vector<node_line*> held;
        for (std::uint64_t i = 0; i < config_.ops_per_thread; ++i) {
            const auto op = plan.next();
            progress_.begin(tid);
            switch (op.kind) {
                case op_kind::create:
                    node_store::create(pool_, *heap_, root_->anchor_b[tid], shape_of(2));
                    break;
                case op_kind::allocate: {
                    auto* n = store_->allocate();
                    write_marker(n, marker_for(config_.seed, tid, i));
                    pmem::pwb(n);
                    pmem::pfence();  // PP: the marker durable before the operation returns
                    held.push_back(n);
                    break;
                }
                case op_kind::free:
                case op_kind::add_free: {
                    auto* n = held[op.index];
                    held.erase(held.begin() + static_cast<std::ptrdiff_t>(op.index));
                    if (op.kind == op_kind::free) {
                        store_->free(n);
                    } else {
                        node_line* const one[] = {n};
                        store_->add_free(one);
                    }
                    break;
                }
            }
            progress_.end(tid);
        }
    }

    const sim::op_progress& progress() const noexcept override { return progress_; }

    void recover(pmem::pool& image) const override {
        const auto* root = root_of(image);
        buddy_heap heap = buddy_heap::open(image, root->heap_offset);
        heap.recover();
        node_store::recover(image, heap, root->anchor_a);
        for (const auto b : root->anchor_b)
            if (b != 0) node_store::recover(image, heap, b);
        heap.finish_recovery();
    }

    std::string verify(pmem::pool& image, const sim::progress_snapshot& at_crash) const override {
        const auto* root = root_of(image);
        buddy_heap heap = buddy_heap::open(image, root->heap_offset);
        if (const auto problems = heap.check(); !problems.empty())
            return "heap check: " + problems.front() + " (" + std::to_string(problems.size()) + " problem(s))";
        for (unsigned t = 0; t < std::min(config_.threads, creators); ++t)
            if (root->anchor_b[t] == 0 && at_crash[t].completed > 0)
                return "thread " + std::to_string(t) + "'s create of its store B returned, but its anchor is 0";
        // Ownership: the heap's blocks are exactly the stores' header and areas.
        std::set<std::uint64_t> owned;
        for (const auto off : node_store::validate(image, heap, root->anchor_a)) owned.insert(off);
        for (const auto b : root->anchor_b)
            for (const auto off : b != 0 ? node_store::validate(image, heap, b) : std::vector<std::uint64_t>{})
                if (!owned.insert(off).second)
                    return "store B owns the block at pool offset " + std::to_string(off) + " of store A";
        for (const auto& b : heap.blocks()) {
            if (b.state == block_state::free) continue;
            const auto off = root->heap_offset + b.offset;
            if (!owned.count(off))
                return "block at pool offset " + std::to_string(off) + " (" + alloc::to_string(b.state) + ", " +
                       std::to_string(std::uint64_t{1} << b.order) + " bytes) belongs to no store: leaked";
            if (b.state != block_state::live)
                return "block at pool offset " + std::to_string(off) + " of a store is " + alloc::to_string(b.state) +
                       " after recovery";
        }
        // Slots of store A.
        const auto store = node_store::open(image, heap, root->anchor_a, shape_of(1));
        const auto blank = shape_of(1).blank_node;
        std::map<std::pair<std::uint64_t, std::uint64_t>, std::uint64_t> found;  // (tid, op) -> pool offset
        unsigned being_written = 0;
        for (const auto& a : store.areas())
            for (std::size_t i = 0; i < a.count; ++i) {
                const node_line* n = a.first + i;
                if (std::memcmp(n, &blank, sizeof blank) == 0) continue;
                const auto where = "slot at pool offset " + std::to_string(store.pool_offset_of(n));
                marker m;
                std::memcpy(&m, n, sizeof m);
                if (m.magic == writing_magic) {  // a pending allocation's marker, cut off
                    ++being_written;
                    continue;
                }
                if (m.magic != marker_magic || m.tid >= config_.threads)
                    return where + " holds neither blank_node nor a marker (a slot not written back, or garbage)";
                const auto& p = at_crash[static_cast<unsigned>(m.tid)];
                const auto want = marker_for(config_.seed, m.tid, m.op);
                if (std::memcmp(&m, &want, sizeof m) != 0 || m.op >= p.completed + (p.pending ? 1 : 0))
                    return where + " holds a marker of thread " + std::to_string(m.tid) + " operation " +
                           std::to_string(m.op) + " that no allocation wrote";
                if (!found.emplace(std::make_pair(m.tid, m.op), store.pool_offset_of(n)).second)
                    return where + ": the marker of thread " + std::to_string(m.tid) + " operation " +
                           std::to_string(m.op) + " is in two slots";
            }
        unsigned pending_allocations = 0;
        for (unsigned t = 0; t < config_.threads; ++t) {
            replay done(config_.seed, t);
            for (std::uint64_t i = 0; i < at_crash[t].completed; ++i) done.next();
            // A pending free may have taken effect: its slot may already be another thread's.
            std::vector<std::uint64_t> gone;
            if (at_crash[t].pending) {
                replay with_pending = done;
                const auto p = with_pending.next();
                if (p.kind == op_kind::allocate) ++pending_allocations;
                if (p.kind == op_kind::free || p.kind == op_kind::add_free) gone.push_back(done.held()[p.index]);
            }
            for (const auto op : done.held())
                if (!found.count({t, op}) && std::find(gone.begin(), gone.end(), op) == gone.end())
                    return "thread " + std::to_string(t) + " holds the slot of its operation " + std::to_string(op) +
                           " (returned), whose marker is in no slot of any area";
        }
        if (being_written > pending_allocations)
            return std::to_string(being_written) + " slots hold a marker being written, but only " +
                   std::to_string(pending_allocations) + " allocation(s) were pending";
        return {};
    }

private:
    const root_line* root_of(pmem::pool& image) const {
        return static_cast<const root_line*>(image.root_bytes(root_bytes(config_)));
    }

    sim::run_config config_;
    sim::op_progress progress_;
    pmem::pool_ref pool_;
    root_line* root_ = nullptr;
    std::unique_ptr<buddy_heap> heap_;
    std::optional<node_store> store_;
};

class node_store_target final : public sim::target {
public:
    std::string_view name() const override { return "node-store"; }
    std::string_view summary() const override {
        return "durable node store of the sets: per-thread allocation of one-line nodes with area growth, "
               "markers written and persisted, free / add_free reuse, one concurrent create (no area lost or "
               "leaked, every persisted marker kept)";
    }
    std::uint64_t pool_size(const sim::run_config& c) const override {
        return (4096 + root_bytes(c) + 8191) / 4096 * 4096;
    }
    // Enough operations that every thread grows a second area, linked in front of its first.
    std::uint64_t default_ops_per_thread() const override { return 150; }
    std::unique_ptr<sim::workload> prepare(pmem::pool& p, const sim::run_config& c) const override {
        return std::make_unique<node_store_workload>(p, c);
    }
    std::vector<std::string> mutation_scope() const override {
        return {"src/sets/node_store", "include/ferrite/sets/node_store"};
    }
};

}  // namespace

void register_node_store_target(sim::target_registry& r) { r.add(std::make_unique<node_store_target>()); }

}  // namespace ferrite::crash::sets_targets
