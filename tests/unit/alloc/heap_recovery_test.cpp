// Recovery: the two-step protocol after a simulated crash (the volatile heap object is lost,
// the memory kept), idempotent repeated calls, and rollback of an operation cut at every
// persistence event (crash images from the simulator).
#include <filesystem>
#include <unistd.h>

#include "ferrite/error.hpp"
#include "ferrite/pmem/pool.hpp"
#include "ferrite/sim/session.hpp"
#include "ferrite/sim/site_registry.hpp"
#include "heap_test_support.hpp"

namespace {

using ferrite::alloc::block_state;
using ferrite::alloc::buddy_heap;
using namespace ferrite_test;

// A "crash": the heap object is gone, the memory stays; reopen (then recover()).
buddy_heap reopen(region& mem) { return buddy_heap::open_in(mem.data(), mem.size()); }

TEST(HeapRecovery, UnconfirmedAllocationIsReclaimedConfirmedOneKept) {
    region mem(64 * 1024);
    auto h = buddy_heap::create_in(mem.data(), mem.size());
    void* kept = h.allocate(100);
    void* lost = h.allocate(200);
    (void)lost;
    auto h2 = reopen(mem);
    h2.recover();
    EXPECT_EQ(h2.state(kept), block_state::allocation_pending);
    h2.confirm_allocation(kept);  // the client's recovery: it references `kept`
    h2.confirm_allocation(kept);  // repeated: harmless
    h2.finish_recovery();
    EXPECT_EQ(h2.state(kept), block_state::live);
    EXPECT_EQ(h2.state(lost), block_state::free);
    h2.confirm_allocation(kept);  // even after finish_recovery
    EXPECT_EQ(h2.check(), std::vector<std::string>{});
    EXPECT_EQ(h2.usage().bytes_used, 128u);
}

TEST(HeapRecovery, UnconfirmedDeallocationIsCompletedAndRepeatsAreHarmless) {
    region mem(64 * 1024);
    auto h = buddy_heap::create_in(mem.data(), mem.size());
    void* a = h.allocate(64);
    void* b = h.allocate(64);
    h.confirm_allocation(a);
    h.confirm_allocation(b);
    h.deallocate(a);
    h.deallocate(b);
    h.confirm_deallocation(b);  // b freed before the crash, a not
    auto h2 = reopen(mem);
    h2.recover();
    EXPECT_EQ(h2.state(a), block_state::deallocation_pending);
    h2.deallocate(a);               // the client repeats its deallocate: no-op
    h2.confirm_deallocation(b);     // and a confirmation that had completed: no-op
    EXPECT_EQ(h2.usage().pending_deallocations, 1u);
    h2.finish_recovery();
    EXPECT_EQ(h2.state(a), block_state::free);
    h2.confirm_deallocation(a);  // after finish_recovery: still a no-op
    EXPECT_EQ(h2.check(), std::vector<std::string>{});
    EXPECT_EQ(h2.usage().bytes_used, 0u);
}

TEST(HeapRecovery, AllocationsDuringClientRecoveryAreNotReclaimed) {
    region mem(64 * 1024);
    auto h = buddy_heap::create_in(mem.data(), mem.size(), {.confirm_slots = 2});
    void* old = h.allocate(64);
    auto h2 = reopen(mem);
    h2.recover();
    void* fresh = h2.allocate(64);  // a client allocates while recovering
    h2.finish_recovery();           // reclaims `old` only
    EXPECT_EQ(h2.state(old), block_state::free);
    EXPECT_EQ(h2.state(fresh), block_state::allocation_pending);
    h2.confirm_allocation(fresh);
    EXPECT_EQ(h2.check(), std::vector<std::string>{});
}

TEST(HeapRecovery, DeallocatingAnUnconfirmedAllocationFreesIt) {
    region mem(64 * 1024);
    auto h = buddy_heap::create_in(mem.data(), mem.size());
    void* p = h.allocate(64);
    h.deallocate(p);
    EXPECT_EQ(h.state(p), block_state::deallocation_pending);
    h.confirm_deallocation(p);
    EXPECT_EQ(h.state(p), block_state::free);
    EXPECT_EQ(h.check(), std::vector<std::string>{});
}

// Cut an allocate or a confirm_deallocation at every persistence event, with every line
// either durable or not at random; recovery must give the state before or after.
TEST(HeapRecovery, RollsBackAnOperationCutAtAnyEvent) {
    for (int which = 0; which < 2; ++which) {
        region mem(64 * 1024);
        auto setup = buddy_heap::create_in(mem.data(), mem.size());
        void* victim = setup.allocate(64);
        setup.confirm_allocation(victim);
        setup.deallocate(victim);
        const auto before = mem.copy();
        std::uint64_t total = 0;
        for (std::uint64_t cut = 1;; ++cut) {
            std::memcpy(mem.data(), before.data(), before.size());
            auto h = buddy_heap::open_in(mem.data(), mem.size());
            h.recover();
            ferrite::sim::site_registry sites;
            std::vector<std::vector<std::byte>> images;
            ferrite::sim::session::options opts;
            ferrite::sim::session* self = nullptr;
            opts.at_event = [&](std::uint64_t e) {
                if (e != cut) return;
                for (std::uint64_t seed = 0; seed < 8; ++seed) {
                    images.emplace_back();
                    self->crash_image(seed * 7919 + e, images.back());
                }
            };
            ferrite::sim::session s(mem.data(), mem.size(), 1, sites, std::move(opts));
            self = &s;
            {
                ferrite::sim::session::binding bind(&s, 0);
                if (which == 0)
                    (void)h.allocate(3000);
                else
                    h.confirm_deallocation(victim);
            }
            total = s.events();
            if (images.empty()) break;
            for (auto& img : images) {
                ferrite::sim::session::binding unbound(nullptr, 0);
                region copy(img.size());  // 64-byte aligned, as a mapping is
                std::memcpy(copy.data(), img.data(), img.size());
                auto r = buddy_heap::open_in(copy.data(), copy.size());
                r.recover();
                ASSERT_EQ(r.check(), std::vector<std::string>{}) << "op " << which << " cut at event " << cut;
                const auto u = r.usage();
                if (which == 0) {
                    EXPECT_TRUE(u.pending_allocations == 0 || u.pending_allocations == 1);
                    r.finish_recovery();  // reclaims the allocation, completes the victim's free
                    EXPECT_EQ(r.usage().bytes_used, 0u);
                } else {
                    const auto st = r.state(r.at(setup.offset_of(victim)));
                    EXPECT_TRUE(st == block_state::deallocation_pending || st == block_state::free) << to_string(st);
                    r.finish_recovery();
                    EXPECT_EQ(r.usage().bytes_used, 0u);
                }
                EXPECT_EQ(r.check(), std::vector<std::string>{});
            }
        }
        EXPECT_GT(total, 6u) << "an operation has at least 8 persistence events";
    }
}

TEST(HeapInPool, CreateCloseOpenAtAnOffset) {
    const auto path = std::filesystem::path("/dev/shm") / ("ferrite-alloc-unit-" + std::to_string(::getpid()));
    std::filesystem::remove(path);
    std::uint64_t offset = 0;
    std::uint64_t block = 0;
    {
        auto p = ferrite::pmem::pool::create(path, "alloc-test", 1 << 20);
        auto* root = static_cast<std::byte*>(p.root_bytes(512 * 1024));
        offset = static_cast<std::uint64_t>(root - p.base());
        auto h = buddy_heap::create(p, offset, 512 * 1024);
        void* b = h.allocate(5000);
        h.confirm_allocation(b);
        block = h.offset_of(b);
        EXPECT_THROW((void)buddy_heap::create(p, offset + 8, 4096), ferrite::usage_error);
        EXPECT_THROW((void)buddy_heap::create(p, offset, p.size()), ferrite::usage_error);
    }
    {
        auto p = ferrite::pmem::pool::open(path, "alloc-test");
        EXPECT_THROW((void)buddy_heap::open(p, offset + 64), ferrite::heap_error);
        auto h = buddy_heap::open(p, offset);
        h.recover();
        h.finish_recovery();
        EXPECT_EQ(h.state(h.at(block)), block_state::live);
        EXPECT_EQ(h.block_size(h.at(block)), 8192u);
        EXPECT_EQ(h.check(), std::vector<std::string>{});
    }
    {
        auto p = ferrite::pmem::pool::inspect(path);
        auto h = buddy_heap::open(p, offset);  // read-only: introspection works, changes do not
        EXPECT_EQ(h.check(), std::vector<std::string>{});
        EXPECT_THROW(h.recover(), ferrite::usage_error);
    }
    std::filesystem::remove(path);
}

}  // namespace
