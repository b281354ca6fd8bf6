// crash/alloc/alloc_target.cpp: the persistent buddy heap (ferrite/alloc/buddy_heap.hpp)
// under its clients, the way a structure uses it.
//
// Root: a header line, then per thread one line of `refs_per_thread` references (heap
// offsets of the thread's live blocks, 0 = empty) and one intent line, then the heap region.
// Thread t's operation i is drawn from (seed, t, i) and the thread's own occupancy, never
// from addresses, so the checker can replay which references must exist. A free works like
// the persistent vector's REPLACE (thesis Alg 5.8): the client commits its own change first,
// then deallocates, so its recovery may have to deallocate again.
//
//   allocate (size 1..2048):  p = allocate(n); stamp(p) := operand; pwb; pfence;
//                             ref[i] := p; pwb; pfence;          // LP/PP: the client owns p
//                             confirm_allocation(p)
//   free ref[i] = p:          intent := {p, i}; pwb; pfence;     // PP: we are freeing p
//                             ref[i] := 0; pwb; pfence;          // LP/PP: dropped
//                             deallocate(p); intent := none; pwb;
//                             confirm_deallocation(p)            // its first fence orders
//                                                                // the intent's pwb
//
// recover(): open the heap, recover() it; then each client's recovery: an intent whose
// reference is still there is dropped (the free had not happened); one whose reference is
// gone is finished (deallocate again - a no-op if pending - then clear the intent and
// confirm); a referenced block still allocation_pending is confirmed; then
// finish_recovery() reclaims the rest.
//
// Checker: the heap's check() finds nothing; each thread's references are exactly those of
// its returned operations, or of those plus the pending one; every referenced block is live
// (confirmed), of the order its size needs, holding the stamp written at its allocation;
// and the live blocks are exactly the referenced ones (anything else leaked).
#include <bit>
#include <string>
#include <unordered_set>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/pmem/primitives.hpp"
#include "alloc_targets.hpp"

namespace ferrite::crash::alloc_targets {
namespace {

using ferrite::alloc::block_state;
using ferrite::alloc::buddy_heap;

constexpr unsigned refs_per_thread = 8;  // one line of references per thread
constexpr std::uint64_t max_request = 2048;

std::uint64_t mixed(std::uint64_t seed, unsigned tid, std::uint64_t op) noexcept {
    return sim::mix(seed, (std::uint64_t{tid} << 40) ^ op) | 1;
}

struct root_header {
    std::uint64_t threads;
    std::uint64_t heap_offset;  // pool offset of the heap region
};

struct alignas(64) thread_refs {
    std::uint64_t ref[refs_per_thread] FERRITE_FLOW_SENTINEL;  // persistent: heap offsets, 0 = empty (commits the block, drops the intent)
    alignas(64) std::uint64_t intent_block;  // persistent: the block being freed...
    std::uint64_t intent_index;              // ...from ref[intent_index - 1]; 0 = none
};

// Heap big enough that no run can exhaust it: each live block of <= 2 KiB pins at most one
// aligned 2 KiB chunk, so (live + 1) chunks always leave one free.
std::uint64_t heap_bytes(const sim::run_config& c) {
    const auto arena = 2 * (std::uint64_t{c.threads} * refs_per_thread + 1) * max_request;
    return arena + arena / 32 + 16384;
}
std::uint64_t root_bytes(const sim::run_config& c) {
    return 64 + std::uint64_t{c.threads} * sizeof(thread_refs) + heap_bytes(c);
}

// What thread `tid`'s first n operations leave in its references: per slot, the operation
// that filled it (or none).
struct planned_op {
    bool allocate = false;
    unsigned index = 0;
    std::uint64_t bytes = 0;
    std::uint64_t stamp = 0;
};

class replay {
public:
    replay(std::uint64_t seed, unsigned tid) : seed_(seed), tid_(tid) {}

    planned_op next() {
        const auto r = mixed(seed_, tid_, op_);
        planned_op p;
        const unsigned used = static_cast<unsigned>(std::popcount(occupied_));
        p.allocate = used == 0 || (used < refs_per_thread && (r >> 1) % 3 != 0);
        if (p.allocate) {
            p.index = static_cast<unsigned>(std::countr_one(occupied_));
            p.bytes = 1 + (r >> 8) % (std::uint64_t{64} << ((r >> 4) % 6));
            p.stamp = r;
            occupied_ |= 1u << p.index;
            filled_by_[p.index] = p;
        } else {
            auto k = (r >> 8) % used;
            for (unsigned i = 0; i < refs_per_thread; ++i)
                if ((occupied_ >> i & 1) && k-- == 0) {
                    p.index = i;
                    break;
                }
            occupied_ &= ~(1u << p.index);
        }
        ++op_;
        return p;
    }
    unsigned occupied() const noexcept { return occupied_; }
    const planned_op& filled_by(unsigned i) const noexcept { return filled_by_[i]; }

private:
    std::uint64_t seed_;
    unsigned tid_;
    std::uint64_t op_ = 0;
    unsigned occupied_ = 0;
    planned_op filled_by_[refs_per_thread]{};
};

unsigned order_for(std::uint64_t bytes) {
    unsigned k = alloc::min_order;
    while ((std::uint64_t{1} << k) < bytes) ++k;
    return k;
}

class alloc_workload final : public sim::workload {
public:
    alloc_workload(pmem::pool& p, const sim::run_config& c)
        : config_(c), progress_(c.threads), heap_(make_heap(p, c)) {
        refs_ = refs_of(p);
    }

    FERRITE_FLOW_ROOT void run_thread(unsigned tid) override {
        auto& mine = refs_[tid];
        replay plan(config_.seed, tid);
        for (std::uint64_t i = 0; i < config_.ops_per_thread; ++i) {
            const auto op = plan.next();
            progress_.begin(tid);
            if (op.allocate) {
                auto* p = heap_.allocate(op.bytes);
                *static_cast<std::uint64_t*>(p) = op.stamp;
                pmem::pwb(p);
                pmem::pfence();  // PP: the block's contents durable before it is referenced
                mine.ref[op.index] = heap_.offset_of(p);
                pmem::pwb(&mine.ref[op.index]);
                pmem::pfence();  // PP: the reference durable before the heap forgets its own
                heap_.confirm_allocation(p);
            } else {
                auto* p = heap_.at(mine.ref[op.index]);
                mine.intent_block = mine.ref[op.index];
                mine.intent_index = op.index + 1;  // same line, stored last: commits the intent
                pmem::pwb(&mine.intent_index);
                pmem::pfence();  // PP: the intent durable before the reference goes
                mine.ref[op.index] = 0;  // LP
                pmem::pwb(&mine.ref[op.index]);
                pmem::pfence();  // PP: dropped before the heap may free the block
                heap_.deallocate(p);
                mine.intent_index = 0;
                // No pfence: confirm_deallocation orders the caller's earlier write-backs
                // before it frees anything (buddy_heap.hpp), and mutation testing shows a
                // pfence here changes nothing.
                pmem::pwb(&mine.intent_index);
                heap_.confirm_deallocation(p);
            }
            progress_.end(tid);
        }
    }

    const sim::op_progress& progress() const noexcept override { return progress_; }

    FERRITE_FLOW_ROOT void recover(pmem::pool& image) const override {
        auto heap = buddy_heap::open(image, header_of(image)->heap_offset);
        heap.recover();
        auto* refs = refs_of(image);
        for (unsigned t = 0; t < config_.threads; ++t) {
            auto& mine = refs[t];
            if (mine.intent_index != 0 && mine.intent_index <= refs_per_thread) {
                if (mine.ref[mine.intent_index - 1] != 0) {
                    // The free had not committed: forget it. Not written back: a lost clear
                    // only makes the next recovery drop the same intent again.
                    mine.intent_index = 0;
                } else {
                    auto* p = heap.at(mine.intent_block);
                    heap.deallocate(p);  // again: a no-op if it is pending already
                    mine.intent_index = 0;
                    pmem::pwb(&mine.intent_index);  // ordered by confirm_deallocation
                    heap.confirm_deallocation(p);
                }
            }
            for (auto ref : mine.ref)
                if (ref != 0 && heap.state(heap.at(ref)) == block_state::allocation_pending)
                    heap.confirm_allocation(heap.at(ref));
        }
        heap.finish_recovery();
    }

    std::string verify(pmem::pool& image, const sim::progress_snapshot& at_crash) const override {
        auto heap = buddy_heap::open(image, header_of(image)->heap_offset);
        if (const auto problems = heap.check(); !problems.empty())
            return "heap check: " + problems.front() + " (" + std::to_string(problems.size()) + " problem(s))";
        const auto* refs = refs_of(image);
        std::unordered_set<std::uint64_t> referenced;
        for (unsigned t = 0; t < config_.threads; ++t) {
            const auto who = "thread " + std::to_string(t) + ": ";
            const auto& p = at_crash[t];
            replay done(config_.seed, t);
            for (std::uint64_t i = 0; i < p.completed; ++i) done.next();
            replay with_pending = done;
            if (p.pending) with_pending.next();
            unsigned actual = 0;
            for (unsigned i = 0; i < refs_per_thread; ++i)
                if (refs[t].ref[i] != 0) actual |= 1u << i;
            const replay* match = actual == done.occupied()           ? &done
                                  : p.pending && actual == with_pending.occupied() ? &with_pending
                                                                                   : nullptr;
            if (!match)
                return who + "references in slots " + std::to_string(actual) + " (bit mask) match neither the " +
                       std::to_string(p.completed) + " returned operations (" + std::to_string(done.occupied()) +
                       ")" + (p.pending ? " nor those plus the pending one (" + std::to_string(with_pending.occupied()) + ")" : "");
            for (unsigned i = 0; i < refs_per_thread; ++i) {
                const auto off = refs[t].ref[i];
                if (off == 0) continue;
                const auto where = who + "reference " + std::to_string(i) + " (heap offset " + std::to_string(off) + ")";
                auto* block = heap.at(off);
                const auto st = heap.state(block);
                if (st != block_state::live)
                    return where + " is " + alloc::to_string(st) + ", not a live block";
                const auto& op = match->filled_by(i);
                if (heap.block_size(block) != (std::size_t{1} << order_for(op.bytes)))
                    return where + " is a block of " + std::to_string(heap.block_size(block)) + " bytes for a request of " +
                           std::to_string(op.bytes);
                if (*static_cast<const std::uint64_t*>(block) != op.stamp)
                    return where + " lost its contents (stamp overwritten)";
                if (!referenced.insert(off).second) return where + " is referenced twice";
            }
        }
        for (const auto& b : heap.blocks()) {
            if (b.state == block_state::free) continue;
            if (!referenced.count(b.offset))
                return "block at heap offset " + std::to_string(b.offset) + " (" + alloc::to_string(b.state) +
                       ", " + std::to_string(std::uint64_t{1} << b.order) + " bytes) is referenced by no thread: leaked";
        }
        return {};
    }

private:
    root_header* header_of(pmem::pool& p) const { return static_cast<root_header*>(p.root_bytes(root_bytes(config_))); }

    thread_refs* refs_of(pmem::pool& p) const {
        return reinterpret_cast<thread_refs*>(reinterpret_cast<std::byte*>(header_of(p)) + 64);
    }

    buddy_heap make_heap(pmem::pool& p, const sim::run_config& c) {
        auto* root = static_cast<std::byte*>(p.root_bytes(root_bytes(c)));
        auto* h = reinterpret_cast<root_header*>(root);
        h->threads = c.threads;
        h->heap_offset = static_cast<std::uint64_t>(root - p.base()) + 64 + std::uint64_t{c.threads} * sizeof(thread_refs);
        pmem::pwb(h);
        pmem::pfence();
        return buddy_heap::create(p, h->heap_offset, heap_bytes(c));
    }

    sim::run_config config_;
    sim::op_progress progress_;
    buddy_heap heap_;
    thread_refs* refs_ = nullptr;
};

}  // namespace

void register_alloc_target(sim::target_registry& r) {
    r.add(std::make_unique<sim::simple_target>(
        "alloc",
        "persistent buddy heap: allocate+confirm / deallocate+confirm of 1..2048 bytes per thread, "
        "references kept in the root (confirm protocol, no leaks)",
        [](pmem::pool& p, const sim::run_config& c) { return std::make_unique<alloc_workload>(p, c); },
        [](const sim::run_config& c) { return (4096 + root_bytes(c) + 8191) / 4096 * 4096; }));
}

}  // namespace ferrite::crash::alloc_targets
