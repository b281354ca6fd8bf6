// The DFC engine never trusts the media (ferrite/combining/dfc_validation.hpp): one test per
// damaged word of a region (header, chunk table, epoch, thread records, root copies, links),
// for every kind. Each is refused by validate(), open() and the recovery after a restart with
// damaged_pool (damaged_object, region = the kind's name, object "") and leaves every byte of
// the region and the heap unchanged (dfc_damage_support.hpp). The container-specific shapes
// (queue tail, deque prev) and the random mutations are in
// tests/unit/containers/dfc_validation_test.cpp.
#include "ferrite/combining/dfc_validation.hpp"

#include <gtest/gtest.h>

#include <cstdint>

#include "../containers/dfc_damage_support.hpp"

namespace ferrite {
namespace {

using ferrite_test::expect_refused;
using ferrite_test::grown_dfc;
using u64 = std::uint64_t;
constexpr u64 bit58 = u64{1} << 58, bit63 = u64{1} << 63;

template <class C>
class DfcDamage : public ::testing::Test {};
using kinds = ::testing::Types<dfc_stack<u64>, dfc_queue<u64>, dfc_deque<u64>>;
TYPED_TEST_SUITE(DfcDamage, kinds);

TYPED_TEST(DfcDamage, TheUndamagedRegionValidatesOpensAndOwnsItsBlocks) {
    grown_dfc<TypeParam> g;
    ASSERT_EQ(g.chunks(), 4u) << "5 region nodes, then chunks of 4, 8 and 16";
    auto ro = alloc::buddy_heap::open_in(g.memory.data(), g.memory.size(), true);
    EXPECT_NO_THROW(TypeParam::validate(g.base, g.bytes, &ro));
    const auto blocks = TypeParam::owned_blocks(g.base, g.bytes, &ro);
    ASSERT_EQ(blocks.size(), 4u);
    EXPECT_EQ(blocks[0], g.base);
    for (unsigned k = 1; k < 4; ++k) EXPECT_EQ(blocks[k], g.heap->at(g.chunk_offset(k)));
    auto c = TypeParam::open(g.base, g.bytes, g.options());
    EXPECT_EQ(c.unsynchronized_contents().size(), 17u) << "20 pushed, 2 popped, thread 2's pop recovered";
    EXPECT_TRUE(c.recover(2).took_effect);
}

// ---- header ----------------------------------------------------------------------------

TYPED_TEST(DfcDamage, ThreadCountOf2To58) {
    grown_dfc<TypeParam> g;
    g.layout().header->threads = bit58;  // threads x 192 wraps nothing: checked by division
    expect_refused(g, "threads = 2^58", "thread count");
}

TYPED_TEST(DfcDamage, ThreadCountZeroOrBeyondUnsignedOrTheRegion) {
    grown_dfc<TypeParam> g;
    const auto fitting = (g.bytes - 256 - 64) / 192;  // more records than fit with one node
    for (u64 threads : {u64{0}, u64{1} << 32, fitting + 1, ~u64{0}}) {
        g.layout().header->threads = threads;
        expect_refused(g, "threads = " + std::to_string(threads), threads == fitting + 1 ? "do not fit" : "thread count");
    }
}

TYPED_TEST(DfcDamage, NodeCountOverflow) {
    grown_dfc<TypeParam> g;
    const u64 fits = (g.bytes - 256 - 3 * 192) / 32 - 1;
    // (capacity + 1) x 32 wraps to a small number for 2^59 - 1 and 2^64 - 1.
    for (u64 cap : {u64{0}, fits + 1, u64{1} << 32, (u64{1} << 59) - 1, bit63, ~u64{0}}) {
        g.layout().header->capacity = cap;
        expect_refused(g, "capacity = " + std::to_string(cap), cap == fits + 1 ? "do not fit" : "node capacity");
    }
}

TYPED_TEST(DfcDamage, MagicAndKind) {
    grown_dfc<TypeParam> g;
    g.layout().header->magic ^= 1;
    expect_refused(g, "magic", "bad magic");
    g.layout().header->magic ^= 1;
    g.layout().header->roots = TypeParam::structure::root_count == 1 ? 2 : 1;
    expect_refused(g, "root count of another kind", "root words");
}

// ---- chunk table ------------------------------------------------------------------------

TYPED_TEST(DfcDamage, ChunkEntryAtAFreeBlock) {
    grown_dfc<TypeParam> g;
    void* spare = g.heap->allocate(16 * sizeof(combining::dfc_node));  // chunk 3's size
    g.heap->confirm_allocation(spare);
    g.heap->deallocate(spare);
    g.heap->confirm_deallocation(spare);
    ASSERT_EQ(g.heap->state(spare), alloc::block_state::free);
    g.layout().chunks->offset[2] = g.heap->offset_of(spare);
    expect_refused(g, "chunk 3 at a free block", "not a live block of the heap (free)");
}

TYPED_TEST(DfcDamage, ChunkEntryOutsideTheHeap) {
    grown_dfc<TypeParam> g;
    const auto& geo = g.heap->geometry();
    for (u64 off : {bit63, ~u64{0}, u64{64}, geo.arena_offset - 64, geo.arena_offset + geo.arena_size,
                    g.chunk_offset(1) + 32, g.chunk_offset(1) + 64}) {
        const auto good = g.chunk_offset(1);
        g.layout().chunks->offset[0] = off;
        expect_refused(g, "chunk 1 at heap offset " + std::to_string(off),
                       off == good + 64 ? "(not a block)" : "not a block position");
        g.layout().chunks->offset[0] = good;
    }
}

TYPED_TEST(DfcDamage, ChunkEntryLiveBlockOfTheWrongSize) {
    grown_dfc<TypeParam> g;
    void* other = g.heap->allocate(256);  // chunk 1's block is 4 nodes = 128 bytes
    g.heap->confirm_allocation(other);
    g.layout().chunks->offset[0] = g.heap->offset_of(other);
    expect_refused(g, "chunk 1 at a live block of 256 bytes", "is a heap block of 256 bytes");
}

TYPED_TEST(DfcDamage, ChunkEntriesNamingOneBlock) {
    // First chunk of 1 node: chunks 1 and 2 both take a 64-byte block (1 and 2 nodes).
    grown_dfc<TypeParam> g(20, /*first_growth_nodes=*/1);
    ASSERT_GE(g.chunks(), 3u);
    g.layout().chunks->offset[1] = g.chunk_offset(1);
    expect_refused(g, "chunks 1 and 2 in one block", "overlaps node chunk 1");
}

TYPED_TEST(DfcDamage, ChunkBlockOverlappingTheRegion) {
    // A damaged heap map that says a 128-byte live block starts inside the region's block.
    grown_dfc<TypeParam> g;
    const auto& geo = g.heap->geometry();
    const u64 inside = g.heap->offset_of(g.base) + 256;
    auto* map = reinterpret_cast<std::uint8_t*>(g.heap->base() + geo.map_offset);
    map[(inside - geo.arena_offset) / alloc::granule] = alloc::live_tag | 7;
    ASSERT_EQ(g.heap->block_size(g.heap->at(inside)), 128u);
    g.layout().chunks->offset[0] = inside;
    expect_refused(g, "chunk 1 inside the region", "overlaps the structure's region");
}

TYPED_TEST(DfcDamage, ChunkEntryAfterAnEmptyOne) {
    grown_dfc<TypeParam> g;
    g.layout().chunks->offset[5] = g.chunk_offset(1);  // entry 6 set, entries 4 and 5 empty
    expect_refused(g, "chunk entry after a gap", "after the empty entry");
}

TYPED_TEST(DfcDamage, FirstGrowthNodesOutOfRange) {
    grown_dfc<TypeParam> g;
    for (u64 first : {u64{0}, u64{1} << 32, bit58}) {
        g.layout().chunks->first_growth_nodes = first;
        expect_refused(g, "first_growth_nodes = " + std::to_string(first), "first_growth_nodes");
    }
    g.layout().chunks->first_growth_nodes = u64{1} << 31;  // in range: chunk 1's block is the wrong size
    expect_refused(g, "first_growth_nodes = 2^31", "is a heap block of");
}

// ---- epoch and root copies --------------------------------------------------------------

TYPED_TEST(DfcDamage, EpochOutOfDomain) {
    grown_dfc<TypeParam> g;
    for (u64 e : {bit63, ~u64{0}, (u64{1} << 62) + 1}) {  // ~0 would round up to 0
        g.layout().epoch->epoch = e;
        expect_refused(g, "cEpoch = " + std::to_string(e), "out of range (at most 2^62)");
    }
}

TYPED_TEST(DfcDamage, RootOutsideTheNodeArea) {
    grown_dfc<TypeParam> g;
    for (unsigned copy = 0; copy < 2; ++copy)
        for (u64 bad : {u64{7} << 32 | 1, u64{0xffffffff}, u64{1} << 32, bit63}) {  // chunk 7 absent; index 0
            auto& w = g.layout().roots[copy].node[0];
            const u64 good = w.load();
            w = bad;
            expect_refused(g, "root copy " + std::to_string(copy) + " word 0 = " + std::to_string(bad), "not a node of the pool");
            w = good;
        }
    auto& unused = g.layout().roots[1].node[combining::dfc_max_roots - 1];
    unused = 1;
    expect_refused(g, "an unused root word set", "unused root word");
}

// ---- thread records ---------------------------------------------------------------------

TYPED_TEST(DfcDamage, RecordSlotChoiceWordOutOfDomain) {
    grown_dfc<TypeParam> g;
    g.layout().threads[1].valid = bit58;
    expect_refused(g, "valid = 2^58", "valid word");
}

TYPED_TEST(DfcDamage, RecordOpCodeOutOfDomain) {
    grown_dfc<TypeParam> g;
    g.layout().threads[0].ann[1].name = TypeParam::structure::op_names + 1;
    expect_refused(g, "an op code the kind does not have", "operation code");
}

TYPED_TEST(DfcDamage, RecordStatusOutOfDomain) {
    grown_dfc<TypeParam> g;
    g.layout().threads[2].ann[0].status = 6;
    expect_refused(g, "status 6", "response status 6");
    g.layout().threads[2].ann[0].status = 0;
    expect_refused(g, "a used slot without a status", "has no status");
}

TYPED_TEST(DfcDamage, RecordEpochOutOfDomain) {
    grown_dfc<TypeParam> g;
    auto& a = g.layout().threads[1].ann[0];
    const u64 c = g.layout().epoch->epoch.load();
    for (u64 e : {c + 1, c + 4, bit63}) {
        a.epoch = e;
        expect_refused(g, "announcement epoch " + std::to_string(e) + " with cEpoch " + std::to_string(c), "announcement epoch");
    }
}

TYPED_TEST(DfcDamage, RecordSeqOutOfDomain) {
    grown_dfc<TypeParam> g;
    auto& rec = g.layout().threads[0];
    const u64 s0 = rec.ann[0].seq.load(), s1 = rec.ann[1].seq.load();
    rec.ann[0].seq = bit63;
    expect_refused(g, "seq 2^63", "seq 9223372036854775808 is out of range");
    rec.ann[0].seq = s0 + 5;
    expect_refused(g, "seqs not consecutive", "not consecutive");
    rec.ann[0].seq = s0;
    rec.ann[1].name = 0;  // unused, but its seq stays
    ASSERT_NE(s1, 0u);
    expect_refused(g, "an unused slot with a seq", "an unused slot");
}

// ---- links --------------------------------------------------------------------------------

TYPED_TEST(DfcDamage, LinkOutsideTheNodeArea) {
    grown_dfc<TypeParam> g;
    const auto nodes = g.list();
    ASSERT_GE(nodes.size(), 3u);
    for (u64 bad : {bit63, u64{5} << 32 | 1, u64{3} << 32 | 17, u64{0xffffffff}}) {  // chunk 3 has 16
        auto& next = g.node(nodes[1]).next;
        const u64 good = next;
        next = bad;
        expect_refused(g, "a link to " + std::to_string(bad), "outside the node pool");
        next = good;
    }
}

TYPED_TEST(DfcDamage, Cycle) {
    grown_dfc<TypeParam> g;
    const auto nodes = g.list();
    ASSERT_GE(nodes.size(), 3u);
    g.node(nodes[2]).next = nodes[1];
    expect_refused(g, "a cycle", "(a cycle)");
}

}  // namespace
}  // namespace ferrite
