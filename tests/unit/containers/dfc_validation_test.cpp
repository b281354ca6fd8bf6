// Validation of the DFC containers' regions (combining/dfc_validation.hpp) from the
// containers' side: the list shapes each structure checks in recovery (queue: the tail is
// reached from the head; deque: prev mirrors next; both: head and tail agree), validate() and
// owned_blocks() on a pool opened read-only, and a seeded random campaign of damaged words:
// every damaged region is either refused with damaged_pool and left byte for byte as it was,
// or opened, recovered and used (one push, one pop) without a fault (run it under ASan).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

#include "catalog_test_support.hpp"
#include "dfc_damage_support.hpp"

namespace ferrite {
namespace {

using ferrite_test::expect_refused;
using ferrite_test::grown_dfc;
using ferrite_test::CatalogTest;
using u64 = std::uint64_t;
using queue = dfc_queue<u64>;
using deque = dfc_deque<u64>;
using stack = dfc_stack<u64>;

// ---- shapes -------------------------------------------------------------------------------

TEST(DfcQueueDamage, TailNotReachableFromTheHead) {
    grown_dfc<queue> g;
    const auto nodes = g.list();
    ASSERT_GE(nodes.size(), 4u);
    g.node(nodes[2]).next = 0;  // the list ends before the tail
    expect_refused(g, "queue cut short", "tail is not reachable");
}

TEST(DfcQueueDamage, TailOffTheList) {
    grown_dfc<queue> g;
    const auto nodes = g.list();
    u64 off_list = 0;
    for (u64 i = 1; i <= 5 && off_list == 0; ++i)
        if (std::find(nodes.begin(), nodes.end(), i) == nodes.end()) off_list = i;
    ASSERT_NE(off_list, 0u) << "17 elements in 33 nodes: one of the region's is free";
    g.active_roots().node[1] = off_list;  // a node of the pool, not on the list
    expect_refused(g, "queue tail off the list", "tail is not reachable");
}

TEST(DfcQueueDamage, HeadAndTailDisagreeOnEmptiness) {
    grown_dfc<queue> g;
    g.active_roots().node[1] = 0;
    expect_refused(g, "queue head without a tail", "disagree on emptiness");
}

TEST(DfcDequeDamage, PrevDoesNotMirrorNext) {
    grown_dfc<deque> g;
    const auto nodes = g.list();
    ASSERT_GE(nodes.size(), 4u);
    g.node(nodes[2]).prev = nodes[0];
    expect_refused(g, "deque prev link", "prev link does not mirror");
}

TEST(DfcDequeDamage, TailNotReachableAndEmptinessDisagreement) {
    grown_dfc<deque> g;
    const auto nodes = g.list();
    g.node(nodes[3]).next = 0;
    expect_refused(g, "deque cut short", "tail is not reachable");
    g.node(nodes[3]).next = nodes[4];
    g.active_roots().node[0] = 0;
    expect_refused(g, "deque tail without a head", "disagree on emptiness");
}

// The repairs of #8 (queue: tail.next; deque: head.prev, tail.next) still happen, after the
// checks: a crashed phase's link past the tail is not taken for damage.
TEST(DfcDequeDamage, LinksNothingReadsAreRepairedNotRefused) {
    grown_dfc<deque> g;
    const auto nodes = g.list();
    g.node(nodes.front()).prev = nodes[3];
    g.node(nodes.back()).next = nodes[1];
    auto d = deque::open(g.base, g.bytes, g.options());
    EXPECT_EQ(d.unsynchronized_check(), "");
    EXPECT_EQ(g.node(nodes.front()).prev, 0u);
    EXPECT_EQ(g.node(nodes.back()).next, 0u);
}

// ---- validate() and owned_blocks() on a pool opened read-only ---------------------------

TEST_F(CatalogTest, NamedDfcStructuresValidateReadOnlyAndOwnDisjointBlocks) {
    {
        catalog names(*pool_, *heap_);
        auto s = names.open_dfc_stack<u64>("s", 2, 4);
        auto q = names.open_dfc_queue<u64>("q", 2, 4);
        for (u64 i = 0; i < 100; ++i) ASSERT_TRUE(s->push(0, i) && q->enqueue(1, i));
    }
    pool_.reset();
    heap_.reset();
    auto ro = pmem::pool::inspect(path_);
    ASSERT_TRUE(ro.read_only());
    auto heap = alloc::buddy_heap::open(ro, ro.heap_offset());  // not recovered: read-only
    auto dir = alloc::name_directory::open_or_create(ro, heap);  // exists: only validates
    std::vector<const void*> all;
    for (const auto& e : dir.entries()) {
        void* region = ro.base() + e.anchor;
        const auto bytes = heap.block_size(region);
        const auto before = std::vector<std::byte>(ro.base(), ro.base() + ro.size());
        std::vector<const void*> blocks;
        if (e.kind == containers::named_kind<stack>::id) {
            EXPECT_NO_THROW(stack::validate(region, bytes, &heap));
            blocks = stack::owned_blocks(region, bytes, &heap);
        } else {
            EXPECT_NO_THROW(queue::validate(region, bytes, &heap));
            blocks = queue::owned_blocks(region, bytes, &heap);
        }
        EXPECT_TRUE(before == std::vector<std::byte>(ro.base(), ro.base() + ro.size()));
        EXPECT_EQ(blocks.front(), region);
        EXPECT_EQ(blocks.size(), 2u) << "100 elements in 4 nodes: one grown chunk (4096 nodes)";
        for (const void* b : blocks) EXPECT_NE(heap.state(b), alloc::block_state::free);
        all.insert(all.end(), blocks.begin(), blocks.end());
    }
    std::sort(all.begin(), all.end());
    EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "two objects share a block";
}

// ---- random damage ------------------------------------------------------------------------

// Where the words are, read once from the undamaged image (the damage may hit the table).
struct damage_targets {
    u64* region;
    std::size_t region_words;
    std::vector<std::pair<u64*, std::size_t>> chunks;  // grown chunks: first word, words
    std::vector<u64> nodes;                             // node count per chunk, chunk 0 first
    u64 arena_offset, arena_granules;
};

template <class C>
damage_targets targets_of(grown_dfc<C>& g) {
    damage_targets t{static_cast<u64*>(g.base), g.bytes / 8, {}, {g.layout().header->capacity}, 0, 0};
    for (unsigned k = 1; k < g.chunks(); ++k) {
        void* block = g.heap->at(g.chunk_offset(k));
        t.chunks.emplace_back(static_cast<u64*>(block), g.heap->block_size(block) / 8);
        t.nodes.push_back(u64{4} << (k - 1));
    }
    t.arena_offset = g.heap->geometry().arena_offset;
    t.arena_granules = g.heap->geometry().arena_size / alloc::granule;
    return t;
}

// One damaged word: where (any word of the region: header, epoch line, chunk table, thread
// records, region nodes; or a word of a grown chunk's nodes) and what (a bit flip, 0, ~0,
// 2^58, 2^63, a node number of the pool or just past a chunk, a heap block offset, a small
// number, the word +- 1..3).
void damage_one_word(const damage_targets& t, std::mt19937_64& rng) {
    u64* word;
    if (rng() % 4 != 0 || t.chunks.empty()) {
        word = t.region + rng() % t.region_words;
    } else {
        const auto& [first, words] = t.chunks[rng() % t.chunks.size()];
        word = first + rng() % words;
    }
    switch (rng() % 9) {
        case 0: *word ^= u64{1} << (rng() % 64); break;
        case 1: *word = 0; break;
        case 2: *word = ~u64{0}; break;
        case 3: *word = u64{1} << 58; break;
        case 4: *word = u64{1} << 63; break;
        case 5: {
            const auto k = rng() % t.nodes.size();
            *word = k << 32 | (1 + rng() % (t.nodes[k] + 1));
            break;
        }
        case 6: *word = t.arena_offset + alloc::granule * (rng() % t.arena_granules); break;
        case 7: *word = rng() % 6; break;
        default: *word += rng() % 2 ? 1 + rng() % 3 : ~(rng() % 3); break;  // +1..3 or -1..3
    }
}

template <class C>
void random_damage(std::uint64_t seed, int rounds) {
    grown_dfc<C> g;
    const auto pristine = g.image();
    const auto targets = targets_of(g);
    std::mt19937_64 rng(seed);
    int refused = 0, opened = 0;
    for (int round = 0; round < rounds; ++round) {
        g.restore(pristine);
        const int words = 1 + static_cast<int>(rng() % 3);
        for (int w = 0; w < words; ++w) damage_one_word(targets, rng);
        const auto damaged = g.image();
        bool valid = true;
        try {
            auto ro = alloc::buddy_heap::open_in(g.memory.data(), g.memory.size(), true);
            C::validate(g.base, g.bytes, &ro);
        } catch (const damaged_pool& e) {
            valid = false;
            ASSERT_EQ(e.kind(), pool_errc::damaged_object) << e.what();
            ASSERT_EQ(e.region(), C::structure::kind_name) << e.what();
        }
        ASSERT_TRUE(damaged == g.image()) << "round " << round << ": validate() wrote";
        // The restart: the heap recovers, then the structure opens (and recovers) with it.
        g.heap.reset(new alloc::buddy_heap(alloc::buddy_heap::open_in(g.memory.data(), g.memory.size())));
        g.heap->recover();
        const auto recovering = g.image();
        std::optional<C> c;
        try {
            c.emplace(C::open(g.base, g.bytes, g.options()));
        } catch (const damaged_pool& e) {
            ASSERT_FALSE(valid) << "round " << round << ": validate() accepted what open() refused: " << e.what();
            ASSERT_TRUE(recovering == g.image()) << "round " << round << ": a refused open wrote: " << e.what();
            ++refused;
            continue;
        }
        ASSERT_TRUE(valid) << "round " << round << ": open() accepted what validate() refused";
        g.heap->finish_recovery();
        ++opened;
        (void)ferrite_test::dfc_ops::push(*c, 0, u64{12345});
        (void)ferrite_test::dfc_ops::pop(*c, 1);
        (void)c->unsynchronized_contents();
        c.reset();
        // Opened once, it opens again (recovery left a consistent region).
        g.heap.reset(new alloc::buddy_heap(alloc::buddy_heap::open_in(g.memory.data(), g.memory.size())));
        g.heap->recover();
        ASSERT_NO_THROW((void)C::open(g.base, g.bytes, g.options())) << "round " << round;
        g.heap->finish_recovery();
    }
    std::printf("%d rounds: %d refused, %d opened\n", rounds, refused, opened);
    EXPECT_GT(refused, rounds / 4);
    EXPECT_GT(opened, rounds / 10);
}

TEST(DfcRandomDamage, Stack) { random_damage<stack>(1, 1200); }
TEST(DfcRandomDamage, Queue) { random_damage<queue>(2, 1200); }
TEST(DfcRandomDamage, Deque) { random_damage<deque>(3, 1200); }

}  // namespace
}  // namespace ferrite
