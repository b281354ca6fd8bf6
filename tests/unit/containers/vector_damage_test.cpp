// A damaged vector header (vector_recovery.hpp: validate_vector): for every word that open,
// the operations or recovery use as a size, an offset or a pointer, a value out of its domain
// makes open (vector and stack), recovery (typed, and from the header alone as the catalog
// runs it) and the read-only checks (validate_vector, vector_owned_blocks over pool::inspect)
// throw damaged_pool of kind damaged_object, and the pool's bytes stay as they were. Every
// crash state the vector can leave (a committed swap log, a REPLACE before and after
// confirm_replacement, an install whose capacity store was lost) is accepted and recovers.
// A seeded fuzzer mutates header words of all those states: each mutated pool is either
// refused with nothing written, or recovers and opens to a vector that works over a
// consistent heap.
#include "ferrite/containers/vector.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "damage_test_support.hpp"
#include "ferrite/containers/stack.hpp"

namespace ferrite {
namespace {

using namespace ferrite_test;
namespace c = containers;
using vec = vector<u64, heap_type>;
using stk = stack<u64, heap_type>;

// The states a vector is damaged in: after a clean shutdown, or one of the crash states its
// recovery finishes.
enum class base {
    plain,      // nothing logged
    swap,       // a swap pass logged two entries and crashed half way through its swaps
    replace,    // REPLACE committed: the old array live, the new one allocation pending
    replaced,   // ... and confirm_replacement done: the old array deallocation pending, the new live
    installed,  // ... and the new data offset installed, its capacity store lost (one line, in order)
};
constexpr base all_bases[] = {base::plain, base::swap, base::replace, base::replaced, base::installed};

constexpr u64 initial_capacity = 16, initial_size = 10, grown_capacity = 32;
u64 value(u64 i) { return 1000 + i; }

// The vector under test (A: a 2048-byte header block, a 128-byte array) and the pool offsets
// a damaged word may be pointed at.
struct world {
    u64 anchor = 0;      // A's header
    u64 data = 0;        // A's array (capacity 16)
    u64 other = 0;       // vector B's header
    u64 other_data = 0;  // B's array: 64 bytes (capacity 2)
    u64 small = 0;       // a live 64-byte block no vector names
    u64 spare = 0;       // a live 1024-byte block no vector names
    u64 free = 0;        // a free block
    u64 fresh = 0;       // the REPLACE target (256 bytes: capacity 32) in the replace states
    c::vector_header& h(damage_pool& d) const { return *reinterpret_cast<c::vector_header*>(d.at(anchor)); }
    c::vector_state& st(damage_pool& d) const { return h(d).state[c::vector_current(h(d))]; }  // the state record
    u64* elements(damage_pool& d, u64 at) const { return reinterpret_cast<u64*>(d.at(at)); }
};

world build(damage_pool& d, base b) {
    u64* words = d.words();
    {
        auto a = vec::create(d.pool(), d.heap(), words[0], initial_capacity);
        for (u64 i = 0; i < initial_size; ++i) EXPECT_TRUE(a.push_back(value(i)));
        auto other = vec::create(d.pool(), d.heap(), words[1], 2);
        EXPECT_TRUE(other.push_back(7));
    }
    world w;
    w.anchor = words[0];
    w.other = words[1];
    w.data = w.h(d).data;
    w.other_data = reinterpret_cast<c::vector_header*>(d.at(w.other))->data;
    const auto keep = [&](std::size_t bytes, u64& word) {  // a live block that only a root word names
        void* p = d.heap().allocate(bytes);
        word = d.offset_of(p);
        d.heap().confirm_allocation(p);
        return word;
    };
    w.small = keep(64, words[2]);
    w.spare = keep(1024, words[3]);
    w.free = d.free_block();
    auto& h = w.h(d);
    u64* data = w.elements(d, w.data);
    switch (b) {
        case base::plain: break;
        case base::swap: {
            auto* entries = reinterpret_cast<c::swap_undo_entry<u64>*>(&h + 1);
            entries[0] = {1, data[1]};
            entries[1] = {3, data[3]};
            h.log_entries = 2;
            h.log_tag = c::vector_log_tag::swap;
            h.state[c::vector_current(h)].redo = 0;  // a swap pass commits a record without redo first
            data[1] = data[3];  // the first half of swap(1, 3)
            break;
        }
        case base::replace:
        case base::replaced:
        case base::installed: {
            void* fresh = d.heap().allocate(grown_capacity * sizeof(u64));
            std::memcpy(fresh, data, initial_size * sizeof(u64));
            w.fresh = d.offset_of(fresh);
            h.replace_data = w.fresh;
            h.replace_capacity = grown_capacity;
            h.log_tag = c::vector_log_tag::replace;
            if (b != base::replace) d.heap().confirm_replacement(fresh, data);
            if (b == base::installed) h.data = w.fresh;
            break;
        }
    }
    return w;
}

// A damaged word: which state, what the message must name, how to damage it.
struct damage_case {
    const char* name;
    base state;
    const char* word;
    // The damaged words are valid for some element type: only open and recover as u64 tell.
    bool typed_only;
    void (*damage)(damage_pool&, world&);
};

const damage_case cases[] = {
    // identity
    {"MagicWrong", base::plain, "magic", false, [](damage_pool& d, world& w) { w.h(d).magic ^= 1; }},
    {"AnchorMisaligned", base::plain, "anchor", false, [](damage_pool&, world& w) { w.anchor += 8; }},
    {"AnchorBeyondThePool", base::plain, "anchor", false,
     [](damage_pool&, world& w) { w.anchor = damage_pool::pool_bytes - 128; }},
    {"AnchorInsideABlock", base::plain, "anchor", false,
     [](damage_pool& d, world& w) {  // a copy of the header, 64 bytes into a live block
         std::memcpy(d.at(w.spare + 64), &w.h(d), sizeof(c::vector_header));
         w.anchor = w.spare + 64;
     }},
    {"AnchorAtATooSmallBlock", base::plain, "anchor", false,
     [](damage_pool& d, world& w) {  // the identity line copied into a 64-byte block
         std::memcpy(d.at(w.small), &w.h(d), 64);
         w.anchor = w.small;
     }},
    {"HeaderBlockDeallocationPending", base::plain, "anchor", false,
     [](damage_pool& d, world& w) { d.heap().deallocate(d.at(w.anchor)); }},
    {"ElementSizeMismatch", base::plain, "element_size", true,
     [](damage_pool& d, world& w) { w.h(d).element_size = 4, w.h(d).element_align = 4; }},
    {"ElementAlignMismatch", base::plain, "element_size", true,
     [](damage_pool& d, world& w) { w.h(d).element_align = 4; }},
    {"ElementSizeZero", base::plain, "element_size", false, [](damage_pool& d, world& w) { w.h(d).element_size = 0; }},
    {"ElementSizeHuge", base::plain, "element_size", false,
     [](damage_pool& d, world& w) { w.h(d).element_size = u64{1} << 63; }},
    {"ElementAlignZero", base::plain, "element_align", false, [](damage_pool& d, world& w) { w.h(d).element_align = 0; }},
    {"ElementAlignNotAPowerOfTwo", base::plain, "element_align", false,
     [](damage_pool& d, world& w) { w.h(d).element_align = 3; }},
    {"ElementAlignAboveTheSize", base::plain, "element_align", false,
     [](damage_pool& d, world& w) { w.h(d).element_align = 16; }},
    // the header block and its swap log
    {"SwapLogCapacityOne", base::plain, "swap_log_capacity", false,
     [](damage_pool& d, world& w) { w.h(d).swap_log_capacity = 1; }},
    {"SwapLogBeyondTheHeaderBlock", base::plain, "swap_log_capacity", false,
     [](damage_pool& d, world& w) { w.h(d).swap_log_capacity = 113; }},  // 704 + 113 x 16 > 2048
    {"SwapLogCapacityOverflows", base::plain, "swap_log_capacity", false,
     [](damage_pool& d, world& w) { w.h(d).swap_log_capacity = u64{1} << 62; }},
    {"LogTagUnknown", base::plain, "log_tag", false,
     [](damage_pool& d, world& w) { w.h(d).log_tag = static_cast<c::vector_log_tag>(3); }},
    {"LogTagAllOnes", base::plain, "log_tag", false,
     [](damage_pool& d, world& w) { w.h(d).log_tag = static_cast<c::vector_log_tag>(~u64{0}); }},
    // the array
    {"DataZero", base::plain, "data", false, [](damage_pool& d, world& w) { w.h(d).data = 0; }},
    {"DataAtAFreeBlock", base::plain, "data", false, [](damage_pool& d, world& w) { w.h(d).data = w.free; }},
    {"DataAtTheHeaderBlock", base::plain, "data", false, [](damage_pool& d, world& w) { w.h(d).data = w.anchor; }},
    {"DataAtATooSmallBlock", base::plain, "data", false, [](damage_pool& d, world& w) { w.h(d).data = w.small; }},
    {"DataAtAnotherVectorsSmallerArray", base::plain, "data", false,
     [](damage_pool& d, world& w) { w.h(d).data = w.other_data; }},
    {"DataInsideABlock", base::plain, "data", false, [](damage_pool& d, world& w) { w.h(d).data = w.data + 64; }},
    {"DataMisaligned", base::plain, "data", false, [](damage_pool& d, world& w) { w.h(d).data = w.data + 8; }},
    {"DataBeyondThePool", base::plain, "data", false,
     [](damage_pool& d, world& w) { w.h(d).data = damage_pool::pool_bytes + 4096; }},
    {"DataAllOnes", base::plain, "data", false, [](damage_pool& d, world& w) { w.h(d).data = ~u64{0}; }},
    {"DataDeallocationPending", base::plain, "data", false,
     [](damage_pool& d, world& w) { d.heap().deallocate(d.at(w.data)); }},
    {"CapacityBeyondTheArray", base::plain, "capacity", false, [](damage_pool& d, world& w) { w.h(d).capacity = 17; }},
    {"CapacityOverflows", base::plain, "capacity", false,
     [](damage_pool& d, world& w) { w.h(d).capacity = (u64{1} << 61) + 1; }},
    {"CapacityZeroWithAnArray", base::plain, "capacity", false,
     [](damage_pool& d, world& w) { w.h(d).capacity = 0, w.st(d).size = 0, w.st(d).redo = 0; }},
    // the state records
    {"SizeBeyondCapacity", base::plain, "size", false, [](damage_pool& d, world& w) { w.st(d).size = 17; }},
    {"SizeAllOnes", base::plain, "size", false, [](damage_pool& d, world& w) { w.st(d).size = ~u64{0}; }},
    {"EpochsEqual", base::plain, "epoch", false,
     [](damage_pool& d, world& w) {
         const u64 other = (c::vector_current(w.h(d)) + 5) % c::vector_state_records;
         w.h(d).state[other].epoch = w.st(d).epoch;
     }},
    {"EpochAtTwoToThe63", base::plain, "epoch", false,
     [](damage_pool& d, world& w) { w.st(d).epoch = u64{1} << 63; }},
    {"RedoBeyondTheRecordsRoom", base::plain, "redo", false, [](damage_pool& d, world& w) { w.st(d).redo = 6; }},
    {"RedoBeyondTheSize", base::plain, "redo", false,
     [](damage_pool& d, world& w) { w.st(d).size = 1, w.st(d).redo = 2; }},
    {"RedoAllOnes", base::plain, "redo", false, [](damage_pool& d, world& w) { w.st(d).redo = ~u64{0}; }},
    {"RedoUnderASwapLog", base::swap, "redo", false, [](damage_pool& d, world& w) { w.st(d).redo = 1; }},
    // the swap log
    {"LogEntriesBeyondTheLog", base::swap, "log_entries", false, [](damage_pool& d, world& w) { w.h(d).log_entries = 65; }},
    {"LogEntriesAllOnes", base::swap, "log_entries", false,
     [](damage_pool& d, world& w) { w.h(d).log_entries = ~u64{0}; }},
    {"SecondUndoIndexAtTheSize", base::swap, "swap undo entry 1", false,  // the first is restorable
     [](damage_pool& d, world& w) { reinterpret_cast<c::swap_undo_entry<u64>*>(&w.h(d) + 1)[1].index = initial_size; }},
    {"SecondUndoIndexBeyondTheCapacity", base::swap, "swap undo entry 1", false,  // recovery once restored the first
     [](damage_pool& d, world& w) { reinterpret_cast<c::swap_undo_entry<u64>*>(&w.h(d) + 1)[1].index = initial_capacity; }},
    {"UndoIndexAllOnes", base::swap, "swap undo entry 0", false,
     [](damage_pool& d, world& w) { reinterpret_cast<c::swap_undo_entry<u64>*>(&w.h(d) + 1)[0].index = ~u64{0}; }},
    {"UndoIndexBeyondTheSizeWithinTheCapacity", base::swap, "swap undo entry 1", false,
     [](damage_pool& d, world& w) { reinterpret_cast<c::swap_undo_entry<u64>*>(&w.h(d) + 1)[1].index = 12; }},
    // REPLACE
    {"ReplaceDataZero", base::replace, "replace_data", false, [](damage_pool& d, world& w) { w.h(d).replace_data = 0; }},
    {"ReplaceDataAtAFreeBlock", base::replace, "replace_data", false,
     [](damage_pool& d, world& w) { w.h(d).replace_data = w.free; }},
    {"ReplaceDataAtTheHeaderBlock", base::replace, "replace_data", false,
     [](damage_pool& d, world& w) { w.h(d).replace_data = w.anchor; }},
    {"ReplaceDataAtATooSmallBlock", base::replace, "replace_data", false,
     [](damage_pool& d, world& w) { w.h(d).replace_data = w.small; }},
    {"ReplaceDataInsideABlock", base::replace, "replace_data", false,
     [](damage_pool& d, world& w) { w.h(d).replace_data = w.fresh + 64; }},
    {"ReplaceDataBeyondThePool", base::replace, "replace_data", false,
     [](damage_pool& d, world& w) { w.h(d).replace_data = u64{1} << 63; }},
    {"ReplaceDataAtALiveBlockNoGrowthMade", base::replace, "replace_data", false,
     [](damage_pool& d, world& w) { w.h(d).replace_data = w.spare; }},  // live, big enough: old must be pending then
    {"ReplaceCapacityZero", base::replace, "replace_capacity", false,
     [](damage_pool& d, world& w) { w.h(d).replace_capacity = 0; }},
    {"ReplaceCapacityBelowTheCapacity", base::replace, "replace_capacity", false,
     [](damage_pool& d, world& w) { w.h(d).replace_capacity = 8; }},
    {"ReplaceCapacityBeyondItsBlock", base::replace, "replace_capacity", false,
     [](damage_pool& d, world& w) { w.h(d).replace_capacity = 33; }},
    {"ReplaceCapacityOverflows", base::replace, "replace_capacity", false,
     [](damage_pool& d, world& w) { w.h(d).replace_capacity = u64{1} << 62; }},
    {"ReplaceOldArrayPendingNewNotConfirmed", base::replace, "replace_data", false,
     [](damage_pool& d, world& w) { d.heap().deallocate(d.at(w.data)); }},  // a pair no growth leaves
    {"ReplacedOldArrayAtALiveBlock", base::replaced, "replace_data", false,
     [](damage_pool& d, world& w) { w.h(d).data = w.spare, w.h(d).capacity = 16; }},
    {"InstalledCapacityBeyondTheTarget", base::installed, "replace_capacity", false,
     [](damage_pool& d, world& w) { w.h(d).replace_capacity = 12; }},
};

class VectorDamage : public ::testing::TestWithParam<damage_case> {};

TEST_P(VectorDamage, IsRefusedByOpenRecoveryAndCheckWithNothingWritten) {
    const auto& k = GetParam();
    damage_pool d("vector");
    world w = build(d, k.state);
    k.damage(d, w);
    const u64 a = w.anchor;
    expect_damaged(d, "vector", k.word, "vector::open", [&] { (void)vec::open(d.pool(), d.heap(), a); });
    expect_damaged(d, "vector", k.word, "stack::open", [&] { (void)stk::open(d.pool(), d.heap(), a); });

    d.reopen();
    d.heap().recover();
    expect_damaged(d, "vector", k.word, "vector::recover", [&] { vec::recover(d.pool(), d.heap(), a); });
    expect_damaged(d, "vector", k.word, "stack::recover", [&] { stk::recover(d.pool(), d.heap(), a); });
    if (!k.typed_only)
        expect_damaged(d, "vector", k.word, "recover_vector", [&] { c::recover_vector(d.pool(), d.heap(), a); });

    d.inspect();
    const auto shape = k.typed_only ? c::element_shape{8, 8} : c::element_shape{};
    expect_damaged(d, "vector", k.word, "validate_vector", [&] { (void)c::validate_vector(d.pool(), d.heap(), a, shape); });
    if (!k.typed_only)
        expect_damaged(d, "vector", k.word, "vector_owned_blocks",
                       [&] { (void)c::vector_owned_blocks(d.pool(), d.heap(), a); });
}

INSTANTIATE_TEST_SUITE_P(Words, VectorDamage, ::testing::ValuesIn(cases),
                         [](const ::testing::TestParamInfo<damage_case>& i) { return std::string(i.param.name); });

std::vector<u64> sorted(std::vector<u64> v) {
    std::ranges::sort(v);
    return v;
}

// The control: every state above, undamaged, validates (read-only too), recovers to the
// elements it held, leaves a consistent heap with nothing pending, and works.
class VectorIntact : public ::testing::TestWithParam<base> {};

TEST_P(VectorIntact, ValidatesRecoversAndWorks) {
    const base b = GetParam();
    damage_pool d("vector");
    const world w = build(d, b);
    const std::vector<u64> owned = b == base::plain || b == base::swap ? std::vector<u64>{w.anchor, w.data}
                                   : b == base::installed              ? std::vector<u64>{w.anchor, w.fresh}
                                                                       : std::vector<u64>{w.anchor, w.data, w.fresh};
    EXPECT_EQ(sorted(c::vector_owned_blocks(d.pool(), d.heap(), w.anchor)), sorted(owned));
    EXPECT_NO_THROW((void)vec::open(d.pool(), d.heap(), w.anchor));

    d.inspect();
    EXPECT_NO_THROW((void)c::validate_vector(d.pool(), d.heap(), w.anchor, {8, 8}));
    EXPECT_EQ(sorted(c::vector_owned_blocks(d.pool(), d.heap(), w.anchor)), sorted(owned));

    d.reopen();
    d.heap().recover();
    ASSERT_NO_THROW(vec::recover(d.pool(), d.heap(), w.anchor));
    d.heap().finish_recovery();
    EXPECT_EQ(d.heap().check(), std::vector<std::string>{});
    EXPECT_EQ(d.heap().usage().pending_allocations + d.heap().usage().pending_deallocations, 0u);
    auto v = vec::open(d.pool(), d.heap(), w.anchor);
    const auto view = v.unsynchronized_view();
    std::vector<u64> expected;
    for (u64 i = 0; i < initial_size; ++i) expected.push_back(value(i));
    EXPECT_EQ(std::vector<u64>(view.begin(), view.end()), expected);
    EXPECT_EQ(v.capacity(), b == base::plain || b == base::swap ? initial_capacity : grown_capacity);
    for (u64 i = 0; i < 40; ++i) ASSERT_TRUE(v.push_back(i)) << "grows";
    EXPECT_EQ(v.pop_back(), 39u);
    EXPECT_EQ(d.heap().check(), std::vector<std::string>{});
}

INSTANTIATE_TEST_SUITE_P(States, VectorIntact, ::testing::ValuesIn(all_bases));

// What one header cannot show: an array of the right size that another vector names too.
// Both validate; their owned blocks overlap, which the catalog checks across its objects.
TEST(VectorDamageAcrossObjects, AnArrayTwoVectorsNameShowsInTheirOwnedBlocks) {
    damage_pool d("vector");
    const world w = build(d, base::plain);
    u64* words = d.words();
    { (void)vec::create(d.pool(), d.heap(), words[4], initial_capacity); }
    const u64 twin = words[4];
    auto& h = *reinterpret_cast<c::vector_header*>(d.at(twin));
    h.data = w.data;  // the twin's own array leaks; the heap cannot tell either
    EXPECT_NO_THROW((void)c::validate_vector(d.pool(), d.heap(), twin));
    const auto mine = c::vector_owned_blocks(d.pool(), d.heap(), w.anchor);
    const auto theirs = c::vector_owned_blocks(d.pool(), d.heap(), twin);
    EXPECT_EQ(std::ranges::count_if(mine, [&](u64 b) { return std::ranges::find(theirs, b) != theirs.end(); }), 1);
}

// A vector written by format 1 (magic "Fvector1": one size word, two fences per push pass)
// or format 2 ("Fvector2": two state records) is not damage: open, recovery and the read-only
// check refuse it as wrong_version, naming its format and this one, and write nothing.
void expect_old_vector_refused(u64 magic, const char* format) {
    damage_pool d("vector");
    world w = build(d, base::plain);
    w.h(d).magic = magic;
    const u64 a = w.anchor;
    const auto refused = [&](const char* what, auto&& call) {
        expect_format_one_refused(d, "vector", what, call, format, "format 3");
    };
    refused("vector::open", [&] { (void)vec::open(d.pool(), d.heap(), a); });
    refused("stack::open", [&] { (void)stk::open(d.pool(), d.heap(), a); });
    d.reopen();
    d.heap().recover();
    refused("vector::recover", [&] { vec::recover(d.pool(), d.heap(), a); });
    refused("recover_vector", [&] { c::recover_vector(d.pool(), d.heap(), a); });
    d.inspect();
    refused("validate_vector", [&] { (void)c::validate_vector(d.pool(), d.heap(), a); });
}

TEST(VectorFormat, AFormatOneVectorIsRefusedAsWrongVersion) { expect_old_vector_refused(c::vector_magic_v1, "format 1"); }
TEST(VectorFormat, AFormatTwoVectorIsRefusedAsWrongVersion) { expect_old_vector_refused(c::vector_magic_v2, "format 2"); }

// A seeded fuzzer over the header words (and the first two undo entries in the swap state):
// every mutated pool either is refused (damaged_pool, nothing written) or recovers, opens and
// works over a consistent heap. Twice per mutation: recovery then open, as after a crash;
// and open after the heap alone recovered, as after a clean shutdown. (The image is loaded
// into the open pool's mapping, which is the file: a restart without the remapping.)
TEST(VectorDamageFuzz, MutatedHeadersAreRefusedCleanlyOrWork) {
    std::map<base, std::string> images;
    std::map<base, world> worlds;
    std::vector<u64> blocks;
    for (base b : all_bases) {
        damage_pool d("vector-fuzz-image");
        worlds[b] = build(d, b);
        if (blocks.empty()) blocks = d.block_offsets();
        d.close();
        images[b] = d.bytes();
    }
    damage_pool d("vector-fuzz");
    const auto refused = [&](auto&& call) {
        const auto before = d.mapped_bytes();
        try {
            call();
            return false;
        } catch (const damaged_pool& e) {
            EXPECT_EQ(e.kind(), pool_errc::damaged_object) << e.what();
            EXPECT_EQ(e.region(), "vector");
            EXPECT_TRUE(d.mapped_bytes() == before) << "refused, but wrote: " << e.what();
            return true;
        }
    };
    const auto works = [&](vec& v) {
        if (v.push_back(0xfeed)) {
            EXPECT_EQ(v.pop_back(), u64{0xfeed});
        }
        EXPECT_EQ(d.heap().check(), std::vector<std::string>{});
    };
    constexpr u64 mutations = 1200;
    unsigned refusals = 0, successes = 0;
    for (u64 i = 0; i < mutations; ++i) {
        const base b = all_bases[i % std::size(all_bases)];
        const u64 a = worlds[b].anchor;
        std::string image = images[b];
        const unsigned words = sizeof(c::vector_header) / 8 + (b == base::swap ? 4 : 0);
        mutate_words(image, a, words, sim::mix(0x7ec7'0bad, i), blocks);
        SCOPED_TRACE("mutation " + std::to_string(i));

        d.load(image);
        d.heap().recover();
        if (refused([&] { vec::recover(d.pool(), d.heap(), a); })) {
            ++refusals;
        } else {
            ++successes;
            d.heap().finish_recovery();
            auto v = vec::open(d.pool(), d.heap(), a);  // a recovered vector always opens
            works(v);
        }

        d.load(image);
        d.heap().recover();
        d.heap().finish_recovery();
        std::optional<vec> v;
        if (!refused([&] { v.emplace(vec::open(d.pool(), d.heap(), a)); })) works(*v);
        if (HasFailure()) break;
    }
    RecordProperty("refused", static_cast<int>(refusals));
    RecordProperty("recovered", static_cast<int>(successes));
    EXPECT_GT(refusals, mutations / 10);
    EXPECT_GT(successes, mutations / 10);
}

}  // namespace
}  // namespace ferrite
