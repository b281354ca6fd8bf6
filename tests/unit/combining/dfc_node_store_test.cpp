// DFC's growable node pool (ferrite/combining/dfc_node_store.hpp): stack, queue and deque
// grow past their region into a buddy heap, keep their contents across restarts, give
// emptied trailing chunks back at the next open, answer `full` when the heap is exhausted,
// and refuse to open without the heap they grew into.
#include "ferrite/combining/dfc_node_store.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "../alloc/heap_test_support.hpp"
#include "../containers/dfc_test_support.hpp"
#include "ferrite/containers/dfc_deque.hpp"
#include "ferrite/containers/dfc_queue.hpp"
#include "ferrite/containers/dfc_stack.hpp"

namespace ferrite {
namespace {

using alloc::buddy_heap;
using ferrite_test::dfc_region_buffer;
using u64 = std::uint64_t;
constexpr unsigned threads = 2;

// A DFC region of `region_nodes` nodes and a heap to grow into, both plain memory that a
// "restart" keeps.
struct growable {
    dfc_region_buffer region;
    ferrite_test::region heap_memory;
    std::unique_ptr<buddy_heap> heap;  // reopened by restart(): the object is lost, the memory kept
    explicit growable(u64 region_nodes, std::size_t heap_bytes = 4 << 20)
        : region(containers_bytes(region_nodes)), heap_memory(heap_bytes) {
        heap.reset(new buddy_heap(buddy_heap::create_in(heap_memory.data(), heap_memory.size())));
    }
    static std::size_t containers_bytes(u64 nodes) { return dfc_stack<u64>::required_bytes(threads, nodes); }
    combining::dfc_options options(u64 first_growth = 8) {
        combining::dfc_options o;
        o.grow_from = &*heap;
        o.first_growth_nodes = first_growth;
        return o;
    }
    // The restart protocol of every heap client: heap.recover(), open the structure,
    // heap.finish_recovery().
    template <class C>
    C restart() {
        heap.reset(new buddy_heap(buddy_heap::open_in(heap_memory.data(), heap_memory.size())));
        heap->recover();
        auto c = C::open(region.data(), region.size(), options());
        heap->finish_recovery();
        return c;
    }
};

TEST(DfcNodeStore, StackGrowsPastItsRegionAndKeepsLifoOrderAcrossRestarts) {
    growable g(4);
    auto s = dfc_stack<u64>::create(g.region.data(), g.region.size(), threads, g.options());
    for (u64 i = 0; i < 5000; ++i) ASSERT_TRUE(s.push(i % threads, i)) << i;
    EXPECT_GE(s.engine().node_chunks(), 9u) << "4 + 8 + 16 + ... nodes: 5000 need 10 chunks";
    EXPECT_EQ(s.engine().nodes_in_use(), 5000u);
    EXPECT_GE(s.engine().capacity(), 5000u);
    auto r = g.restart<dfc_stack<u64>>();
    EXPECT_EQ(r.engine().node_chunks(), s.engine().node_chunks());
    EXPECT_EQ(r.engine().nodes_in_use(), 5000u) << "recovery's garbage collection walks every chunk";
    EXPECT_TRUE(g.heap->check().empty());
    for (u64 i = 5000; i-- > 0;) ASSERT_EQ(r.pop(i % threads), i);
    EXPECT_FALSE(r.pop(0));
    EXPECT_EQ(r.engine().nodes_in_use(), 0u);
}

TEST(DfcNodeStore, QueueAndDequeGrowAndReuseFreedNodesBeforeGrowingAgain) {
    growable g(2);
    auto q = dfc_queue<u64>::create(g.region.data(), g.region.size(), threads, g.options(4));
    std::mt19937_64 rng(7);
    std::deque<u64> model;
    for (u64 i = 0; i < 20000; ++i) {
        if (rng() % 2 || model.empty()) {
            ASSERT_TRUE(q.enqueue(0, i));
            model.push_back(i);
        } else {
            ASSERT_EQ(q.dequeue(1), model.front());
            model.pop_front();
        }
    }
    const auto chunks = q.engine().node_chunks();
    EXPECT_LE(q.engine().capacity(), 4 * model.size() + 16) << "freed nodes are reused before the pool grows";
    auto r = g.restart<dfc_queue<u64>>();
    EXPECT_LE(r.engine().node_chunks(), chunks) << "only emptied trailing chunks go back";
    const auto c = r.unsynchronized_contents();
    EXPECT_TRUE(std::equal(c.begin(), c.end(), model.begin(), model.end()));

    growable h(2);
    auto d = dfc_deque<u64>::create(h.region.data(), h.region.size(), threads, h.options(2));
    for (u64 i = 0; i < 3000; ++i) ASSERT_TRUE(i % 2 ? d.push_front(0, i) : d.push_back(1, i));
    auto rd = h.restart<dfc_deque<u64>>();
    EXPECT_EQ(rd.unsynchronized_check(), "");
    EXPECT_EQ(rd.unsynchronized_contents().size(), 3000u);
    EXPECT_EQ(rd.pop_front(0), 2999u);
    EXPECT_EQ(rd.pop_back(1), 2998u);
}

TEST(DfcNodeStore, ExhaustedHeapAnswersFullWithoutEffect) {
    growable g(2, 64 * 1024);
    auto s = dfc_stack<u64>::create(g.region.data(), g.region.size(), 1, g.options());
    u64 pushed = 0;
    while (s.push(0, pushed)) ++pushed;
    EXPECT_GT(pushed, 2u) << "it grew before the heap ran out";
    EXPECT_EQ(s.recover(0).response.status, combining::dfc_status::full);
    EXPECT_EQ(s.engine().nodes_in_use(), pushed);
    EXPECT_EQ(s.pop(0), pushed - 1) << "a full push changed nothing";
    EXPECT_TRUE(s.push(0, 99)) << "the freed node is reused";
}

TEST(DfcNodeStore, WithoutAHeapThePoolKeepsItsRegionCapacity) {
    dfc_region_buffer region(dfc_stack<u64>::required_bytes(1, 3));
    auto s = dfc_stack<u64>::create(region.data(), region.size(), 1);
    EXPECT_TRUE(s.push(0, 1) && s.push(0, 2) && s.push(0, 3));
    EXPECT_FALSE(s.push(0, 4));
    EXPECT_EQ(s.engine().node_chunks(), 1u);
}

TEST(DfcNodeStore, GrownStructureRefusesToOpenWithoutItsHeapAndChangesNothing) {
    growable g(2);
    {
        auto s = dfc_stack<u64>::create(g.region.data(), g.region.size(), threads, g.options(2));
        for (u64 i = 0; i < 10; ++i) ASSERT_TRUE(s.push(0, i));
    }
    const auto* bytes = static_cast<const std::byte*>(g.region.data());
    const std::vector<std::byte> before(bytes, bytes + g.region.size());
    try {
        (void)dfc_stack<u64>::open(g.region.data(), g.region.size());
        FAIL() << "opened a grown structure without its heap";
    } catch (const ferrite::error& e) {
        EXPECT_NE(std::string(e.what()).find("open it with that heap"), std::string::npos) << e.what();
    }
    // A heap that does not hold the chunks (a fresh one) is refused too.
    ferrite_test::region other_memory(4 << 20);
    auto other = buddy_heap::create_in(other_memory.data(), other_memory.size());
    combining::dfc_options o;
    o.grow_from = &other;
    EXPECT_THROW((void)dfc_stack<u64>::open(g.region.data(), g.region.size(), o), ferrite::error);
    EXPECT_TRUE(std::equal(before.begin(), before.end(), bytes)) << "a failed open wrote to the region";
    auto r = g.restart<dfc_stack<u64>>();
    EXPECT_EQ(r.unsynchronized_contents().size(), 10u);
}

TEST(DfcNodeStore, ChunkLeftPendingByACrashIsConfirmedByRecovery) {
    growable g(2);
    {
        auto s = dfc_stack<u64>::create(g.region.data(), g.region.size(), threads, g.options(2));
        for (u64 i = 0; s.engine().node_chunks() < 2; ++i) ASSERT_TRUE(s.push(0, i));  // grows once
        ASSERT_TRUE(s.push(0, 100));
    }
    // The crash came between the chunk table's fence and confirm_allocation: the heap's
    // confirm slot still names the block. Rebuild that state with a block allocated and
    // never confirmed, recorded as chunk 2.
    auto layout = g.region.layout(threads);
    void* block = g.heap->allocate(4 * sizeof(combining::dfc_node));
    layout.chunks->offset[1] = g.heap->offset_of(block);
    auto r = g.restart<dfc_stack<u64>>();
    // Recovery confirmed the pending chunk; holding no node, it then went back to the heap.
    EXPECT_EQ(g.heap->state(block), alloc::block_state::free);
    EXPECT_EQ(layout.chunks->offset[1], 0u);
    EXPECT_EQ(r.engine().node_chunks(), 2u);
    EXPECT_EQ(r.unsynchronized_contents().front(), 100u);
    EXPECT_TRUE(r.push(0, 101));
    EXPECT_TRUE(g.heap->check().empty());
}

TEST(DfcNodeStore, EmptiedChunksGoBackToTheHeapAtTheNextOpen) {
    growable g(4);
    const auto empty_heap = g.heap->usage().bytes_used;
    auto s = dfc_stack<u64>::create(g.region.data(), g.region.size(), threads, g.options());
    for (u64 i = 0; i < 5000; ++i) ASSERT_TRUE(s.push(0, i));
    for (u64 i = 0; i < 4990; ++i) ASSERT_TRUE(s.pop(1));  // 10 left: in chunks 0 and 1
    EXPECT_GE(s.engine().node_chunks(), 9u) << "nothing is given back while the structure is open";
    auto r = g.restart<dfc_stack<u64>>();
    EXPECT_EQ(r.engine().node_chunks(), 2u) << "4 + 8 nodes hold the 10 left";
    const auto after = g.heap->usage().bytes_used;
    EXPECT_LT(after - empty_heap, 1024u) << "only chunk 1's block (8 nodes) stays allocated";
    EXPECT_TRUE(g.heap->check().empty());
    EXPECT_EQ(r.unsynchronized_contents().size(), 10u);
    for (u64 i = 0; i < 1000; ++i) ASSERT_TRUE(r.push(0, i)) << "grows again";
    auto again = g.restart<dfc_stack<u64>>();
    EXPECT_EQ(again.unsynchronized_contents().size(), 1010u);
    EXPECT_TRUE(g.heap->check().empty());
}

// The crash came inside a release, after heap.deallocate and before the cleared table entry
// was durable: the table names the last chunk, its block pending deallocation.
TEST(DfcNodeStore, AReleaseCutOffByACrashIsFinishedByRecovery) {
    growable g(2);
    auto layout = g.region.layout(threads);
    {
        auto s = dfc_stack<u64>::create(g.region.data(), g.region.size(), threads, g.options(2));
        for (u64 i = 0; s.engine().node_chunks() < 3; ++i) ASSERT_TRUE(s.push(0, i));
        while (s.engine().nodes_in_use() > 1) ASSERT_TRUE(s.pop(0));  // chunk 2 is empty
    }
    void* chunk2 = g.heap->at(layout.chunks->offset[1]);
    g.heap->deallocate(chunk2);
    auto r = g.restart<dfc_stack<u64>>();
    EXPECT_EQ(layout.chunks->offset[1], 0u);
    EXPECT_EQ(g.heap->state(chunk2), alloc::block_state::free);
    EXPECT_EQ(r.unsynchronized_contents().size(), 1u);
    EXPECT_TRUE(g.heap->check().empty());
}

// A chunk pending deallocation whose nodes are reachable is no state a crash leaves: damage.
TEST(DfcNodeStore, AReleasingChunkWithReachableNodesIsDamage) {
    growable g(2);
    auto layout = g.region.layout(threads);
    {
        auto s = dfc_stack<u64>::create(g.region.data(), g.region.size(), threads, g.options(2));
        for (u64 i = 0; s.engine().node_chunks() < 2 || s.engine().nodes_in_use() < 4; ++i) ASSERT_TRUE(s.push(0, i));
    }
    g.heap->deallocate(g.heap->at(layout.chunks->offset[0]));
    EXPECT_THROW(g.restart<dfc_stack<u64>>(), damaged_pool);
}

}  // namespace
}  // namespace ferrite
