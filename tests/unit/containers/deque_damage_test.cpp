// A damaged deque header (deque_recovery.hpp: validate_deque): for every word that open, the
// operations or recovery use as a size, an offset or a pointer, a value out of its domain
// makes open (deque and queue), recovery (typed, and from the header alone) and the read-only
// checks (validate_deque, deque_owned_blocks over pool::inspect) throw damaged_pool of kind
// damaged_object, and the pool's bytes stay as they were. Every crash state the deque can
// leave (a REPLACE before and after confirm_replacement, an install whose capacity store was
// lost) is accepted and recovers. A seeded fuzzer mutates header words of all those states:
// each mutated pool is either refused with nothing written, or recovers and opens to a deque
// that works over a consistent heap.
#include "ferrite/containers/deque.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "damage_test_support.hpp"
#include "ferrite/containers/queue.hpp"

namespace ferrite {
namespace {

using namespace ferrite_test;
namespace c = containers;
using deq = deque<u64, heap_type>;
using que = queue<u64, heap_type>;

// The states a deque is damaged in: after a clean shutdown, or one of the crash states its
// recovery finishes.
enum class base {
    plain,      // nothing logged
    replace,    // REPLACE committed: the old ring live, the new one allocation pending
    replaced,   // ... and confirm_replacement done: the old ring deallocation pending, the new live
    installed,  // ... and the new data offset installed, its capacity store lost (one line, in order)
};
constexpr base all_bases[] = {base::plain, base::replace, base::replaced, base::installed};

constexpr u64 initial_capacity = 16, initial_size = 10, grown_capacity = 32;
u64 value(u64 i) { return 1000 + i; }

// The deque under test (A: a 320-byte header block, a 128-byte ring that wraps) and the pool
// offsets a damaged word may be pointed at.
struct world {
    u64 anchor = 0;      // A's header
    u64 data = 0;        // A's ring (capacity 16)
    u64 other_data = 0;  // deque B's ring: 64 bytes (capacity 2)
    u64 small = 0;       // a live 64-byte block no deque names
    u64 spare = 0;       // a live 1024-byte block no deque names
    u64 free = 0;        // a free block
    u64 fresh = 0;       // the REPLACE target (256 bytes: capacity 32) in the replace states
    c::deque_header& h(damage_pool& d) const { return *reinterpret_cast<c::deque_header*>(d.at(anchor)); }
    c::deque_state& state(damage_pool& d) const { return h(d).state[c::deque_current(h(d))]; }  // the state record
};

world build(damage_pool& d, base b) {
    u64* words = d.words();
    {
        auto a = deq::create(d.pool(), d.heap(), words[0], initial_capacity);
        for (u64 i = 0; i < 6; ++i) EXPECT_TRUE(a.push_front(value(5 - i)));  // head wraps below 0
        for (u64 i = 6; i < initial_size; ++i) EXPECT_TRUE(a.push_back(value(i)));
        auto other = deq::create(d.pool(), d.heap(), words[1], 2);
        EXPECT_TRUE(other.push_back(7));
    }
    world w;
    w.anchor = words[0];
    w.data = w.h(d).data;
    w.other_data = reinterpret_cast<c::deque_header*>(d.at(words[1]))->data;
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
    if (b != base::plain) {
        void* fresh = d.heap().allocate(grown_capacity * sizeof(u64));
        const auto st = w.state(d);
        const auto* from = reinterpret_cast<const u64*>(d.at(w.data));
        auto* to = static_cast<u64*>(fresh);
        for (u64 k = 0; k < st.size; ++k) to[(st.head + k) % grown_capacity] = from[(st.head + k) % initial_capacity];
        w.fresh = d.offset_of(fresh);
        h.replace_data = w.fresh;
        h.replace_capacity = grown_capacity;
        h.log_tag = c::deque_log_tag::replace;
        if (b != base::replace) d.heap().confirm_replacement(fresh, d.at(w.data));
        if (b == base::installed) h.data = w.fresh;
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
         std::memcpy(d.at(w.spare + 64), &w.h(d), sizeof(c::deque_header));
         w.anchor = w.spare + 64;
     }},
    {"AnchorAtATooSmallBlock", base::plain, "anchor", false,
     [](damage_pool& d, world& w) {  // the identity line copied into a 64-byte block
         std::memcpy(d.at(w.small), &w.h(d), 64);
         w.anchor = w.small;
     }},
    {"HeaderBlockDeallocationPending", base::plain, "anchor", false,
     [](damage_pool& d, world& w) { d.heap().deallocate(d.at(w.anchor)); }},
    {"ElementSizeMismatch", base::plain, "element_size", true, [](damage_pool& d, world& w) { w.h(d).element_size = 4; }},
    {"ElementSizeZero", base::plain, "element_size", false, [](damage_pool& d, world& w) { w.h(d).element_size = 0; }},
    {"ElementSizeHuge", base::plain, "element_size", false,
     [](damage_pool& d, world& w) { w.h(d).element_size = u64{1} << 63; }},
    {"LogTagUnknown", base::plain, "log_tag", false,
     [](damage_pool& d, world& w) { w.h(d).log_tag = static_cast<c::deque_log_tag>(2); }},
    {"LogTagAllOnes", base::plain, "log_tag", false,
     [](damage_pool& d, world& w) { w.h(d).log_tag = static_cast<c::deque_log_tag>(~u64{0}); }},
    // the ring
    {"DataZero", base::plain, "data", false, [](damage_pool& d, world& w) { w.h(d).data = 0; }},
    {"DataAtAFreeBlock", base::plain, "data", false, [](damage_pool& d, world& w) { w.h(d).data = w.free; }},
    {"DataAtTheHeaderBlock", base::plain, "data", false, [](damage_pool& d, world& w) { w.h(d).data = w.anchor; }},
    {"DataAtATooSmallBlock", base::plain, "data", false, [](damage_pool& d, world& w) { w.h(d).data = w.small; }},
    {"DataAtAnotherDequesSmallerRing", base::plain, "data", false,
     [](damage_pool& d, world& w) { w.h(d).data = w.other_data; }},
    {"DataInsideABlock", base::plain, "data", false, [](damage_pool& d, world& w) { w.h(d).data = w.data + 64; }},
    {"DataMisaligned", base::plain, "data", false, [](damage_pool& d, world& w) { w.h(d).data = w.data + 8; }},
    {"DataBeyondThePool", base::plain, "data", false,
     [](damage_pool& d, world& w) { w.h(d).data = damage_pool::pool_bytes + 4096; }},
    {"DataAllOnes", base::plain, "data", false, [](damage_pool& d, world& w) { w.h(d).data = ~u64{0}; }},
    {"DataDeallocationPending", base::plain, "data", false,
     [](damage_pool& d, world& w) { d.heap().deallocate(d.at(w.data)); }},
    {"CapacityNotAPowerOfTwo", base::plain, "capacity", false, [](damage_pool& d, world& w) { w.h(d).capacity = 12; }},
    {"CapacityBeyondTheRing", base::plain, "capacity", false, [](damage_pool& d, world& w) { w.h(d).capacity = 32; }},
    {"CapacityOverflows", base::plain, "capacity", false,
     [](damage_pool& d, world& w) { w.h(d).capacity = u64{1} << 62; }},
    {"CapacityZeroWithARing", base::plain, "capacity", false,
     [](damage_pool& d, world& w) { w.h(d).capacity = 0, w.state(d).size = 0, w.state(d).redo_back = 0; }},
    // the committed state
    {"SizeBeyondCapacity", base::plain, "size", false, [](damage_pool& d, world& w) { w.state(d).size = 17; }},
    {"SizeAllOnes", base::plain, "size", false, [](damage_pool& d, world& w) { w.state(d).size = ~u64{0}; }},
    {"EpochSelectsADamagedRecord", base::plain, "size", false,
     [](damage_pool& d, world& w) {
         auto& other = w.h(d).state[1 - c::deque_current(w.h(d))];
         other.size = 1000;
         other.epoch = w.state(d).epoch + 1;
     }},
    {"EpochsEqual", base::plain, "epoch", false,
     [](damage_pool& d, world& w) { w.h(d).state[0].epoch = w.h(d).state[1].epoch; }},
    {"EpochAtTwoToThe63", base::plain, "epoch", false,
     [](damage_pool& d, world& w) { w.state(d).epoch = u64{1} << 63; }},
    {"RedoBeyondTheRecordsRoom", base::plain, "redo", false,
     [](damage_pool& d, world& w) { w.state(d).redo_front = 3, w.state(d).redo_back = 2; }},
    {"RedoBeyondTheSize", base::plain, "redo", false,
     [](damage_pool& d, world& w) { w.state(d).size = 1, w.state(d).redo_front = 1, w.state(d).redo_back = 1; }},
    {"RedoAllOnes", base::plain, "redo", false,
     [](damage_pool& d, world& w) { w.state(d).redo_front = ~0u, w.state(d).redo_back = ~0u; }},
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
    {"ReplaceCapacityNotAPowerOfTwo", base::replace, "replace_capacity", false,
     [](damage_pool& d, world& w) { w.h(d).replace_capacity = 24; }},
    {"ReplaceCapacityBelowTheCapacity", base::replace, "replace_capacity", false,
     [](damage_pool& d, world& w) { w.h(d).replace_capacity = 8; }},
    {"ReplaceCapacityBeyondItsBlock", base::replace, "replace_capacity", false,
     [](damage_pool& d, world& w) { w.h(d).replace_capacity = 64; }},
    {"ReplaceCapacityOverflows", base::replace, "replace_capacity", false,
     [](damage_pool& d, world& w) { w.h(d).replace_capacity = u64{1} << 62; }},
    {"ReplaceOldRingPendingNewNotConfirmed", base::replace, "replace_data", false,
     [](damage_pool& d, world& w) { d.heap().deallocate(d.at(w.data)); }},  // a pair no growth leaves
    {"ReplacedOldRingAtALiveBlock", base::replaced, "replace_data", false,
     [](damage_pool& d, world& w) { w.h(d).data = w.spare; }},
    {"InstalledCapacityBeyondTheTarget", base::installed, "replace_capacity", false,
     [](damage_pool& d, world& w) { w.h(d).replace_capacity = 8; }},
};

class DequeDamage : public ::testing::TestWithParam<damage_case> {};

TEST_P(DequeDamage, IsRefusedByOpenRecoveryAndCheckWithNothingWritten) {
    const auto& k = GetParam();
    damage_pool d("deque");
    world w = build(d, k.state);
    k.damage(d, w);
    const u64 a = w.anchor;
    expect_damaged(d, "deque", k.word, "deque::open", [&] { (void)deq::open(d.pool(), d.heap(), a); });
    expect_damaged(d, "deque", k.word, "queue::open", [&] { (void)que::open(d.pool(), d.heap(), a); });

    d.reopen();
    d.heap().recover();
    expect_damaged(d, "deque", k.word, "deque::recover", [&] { deq::recover(d.pool(), d.heap(), a); });
    expect_damaged(d, "deque", k.word, "queue::recover", [&] { que::recover(d.pool(), d.heap(), a); });
    if (!k.typed_only)
        expect_damaged(d, "deque", k.word, "recover_deque", [&] { c::recover_deque(d.pool(), d.heap(), a); });

    d.inspect();
    const u64 element_size = k.typed_only ? 8 : 0;
    expect_damaged(d, "deque", k.word, "validate_deque",
                   [&] { (void)c::validate_deque(d.pool(), d.heap(), a, element_size); });
    if (!k.typed_only)
        expect_damaged(d, "deque", k.word, "deque_owned_blocks",
                       [&] { (void)c::deque_owned_blocks(d.pool(), d.heap(), a); });
}

INSTANTIATE_TEST_SUITE_P(Words, DequeDamage, ::testing::ValuesIn(cases),
                         [](const ::testing::TestParamInfo<damage_case>& i) { return std::string(i.param.name); });

std::vector<u64> sorted(std::vector<u64> v) {
    std::ranges::sort(v);
    return v;
}

// The control: every state above, undamaged, validates (read-only too), recovers to the
// elements it held, leaves a consistent heap with nothing pending, and works.
class DequeIntact : public ::testing::TestWithParam<base> {};

TEST_P(DequeIntact, ValidatesRecoversAndWorks) {
    const base b = GetParam();
    damage_pool d("deque");
    const world w = build(d, b);
    const std::vector<u64> owned = b == base::plain       ? std::vector<u64>{w.anchor, w.data}
                                   : b == base::installed ? std::vector<u64>{w.anchor, w.fresh}
                                                          : std::vector<u64>{w.anchor, w.data, w.fresh};
    EXPECT_EQ(sorted(c::deque_owned_blocks(d.pool(), d.heap(), w.anchor)), sorted(owned));
    EXPECT_NO_THROW((void)deq::open(d.pool(), d.heap(), w.anchor));

    d.inspect();
    EXPECT_NO_THROW((void)c::validate_deque(d.pool(), d.heap(), w.anchor, 8));
    EXPECT_EQ(sorted(c::deque_owned_blocks(d.pool(), d.heap(), w.anchor)), sorted(owned));

    d.reopen();
    d.heap().recover();
    ASSERT_NO_THROW(deq::recover(d.pool(), d.heap(), w.anchor));
    d.heap().finish_recovery();
    EXPECT_EQ(d.heap().check(), std::vector<std::string>{});
    EXPECT_EQ(d.heap().usage().pending_allocations + d.heap().usage().pending_deallocations, 0u);
    auto q = deq::open(d.pool(), d.heap(), w.anchor);
    std::vector<u64> expected;
    for (u64 i = 0; i < initial_size; ++i) expected.push_back(value(i));
    EXPECT_EQ(q.unsynchronized_contents(), expected);
    EXPECT_EQ(q.unsynchronized_capacity(), b == base::plain ? initial_capacity : grown_capacity);
    for (u64 i = 0; i < 40; ++i) ASSERT_TRUE(q.push_front(i)) << "grows";
    EXPECT_EQ(q.pop_front(), 39u);
    EXPECT_EQ(q.pop_back(), value(initial_size - 1));
    EXPECT_EQ(d.heap().check(), std::vector<std::string>{});
}

INSTANTIATE_TEST_SUITE_P(States, DequeIntact, ::testing::ValuesIn(all_bases));

// What one header cannot show: a ring of the right size that another deque names too. Both
// validate; their owned blocks overlap, which the catalog checks across its objects.
TEST(DequeDamageAcrossObjects, ARingTwoDequesNameShowsInTheirOwnedBlocks) {
    damage_pool d("deque");
    const world w = build(d, base::plain);
    u64* words = d.words();
    { (void)deq::create(d.pool(), d.heap(), words[4], initial_capacity); }
    const u64 twin = words[4];
    reinterpret_cast<c::deque_header*>(d.at(twin))->data = w.data;
    EXPECT_NO_THROW((void)c::validate_deque(d.pool(), d.heap(), twin));
    const auto mine = c::deque_owned_blocks(d.pool(), d.heap(), w.anchor);
    const auto theirs = c::deque_owned_blocks(d.pool(), d.heap(), twin);
    EXPECT_EQ(std::ranges::count_if(mine, [&](u64 b) { return std::ranges::find(theirs, b) != theirs.end(); }), 1);
}

// A deque or queue written by format 1 (magic "FrDeque1": one epoch word, two fences per push
// pass) is not damage: open, recovery and the read-only check refuse it as wrong_version,
// naming both formats, and write nothing.
TEST(DequeFormat, AFormatOneDequeIsRefusedAsWrongVersion) {
    damage_pool d("deque");
    world w = build(d, base::plain);
    w.h(d).magic = c::deque_magic_v1;
    const u64 a = w.anchor;
    const auto refused = [&](const char* what, auto&& call) { expect_format_one_refused(d, "deque", what, call); };
    refused("deque::open", [&] { (void)deq::open(d.pool(), d.heap(), a); });
    refused("queue::open", [&] { (void)que::open(d.pool(), d.heap(), a); });
    d.reopen();
    d.heap().recover();
    refused("deque::recover", [&] { deq::recover(d.pool(), d.heap(), a); });
    refused("recover_deque", [&] { c::recover_deque(d.pool(), d.heap(), a); });
    d.inspect();
    refused("validate_deque", [&] { (void)c::validate_deque(d.pool(), d.heap(), a); });
}

// A seeded fuzzer over the header words: every mutated pool either is refused
// (damaged_pool, nothing written) or recovers, opens and works over a consistent heap. Twice
// per mutation: recovery then open, as after a crash; and open after the heap alone
// recovered, as after a clean shutdown. (The image is loaded into the open pool's mapping,
// which is the file: a restart without the remapping.)
TEST(DequeDamageFuzz, MutatedHeadersAreRefusedCleanlyOrWork) {
    std::map<base, std::string> images;
    std::map<base, world> worlds;
    std::vector<u64> blocks;
    for (base b : all_bases) {
        damage_pool d("deque-fuzz-image");
        worlds[b] = build(d, b);
        if (blocks.empty()) blocks = d.block_offsets();
        d.close();
        images[b] = d.bytes();
    }
    damage_pool d("deque-fuzz");
    const auto refused = [&](auto&& call) {
        const auto before = d.mapped_bytes();
        try {
            call();
            return false;
        } catch (const damaged_pool& e) {
            EXPECT_EQ(e.kind(), pool_errc::damaged_object) << e.what();
            EXPECT_EQ(e.region(), "deque");
            EXPECT_TRUE(d.mapped_bytes() == before) << "refused, but wrote: " << e.what();
            return true;
        }
    };
    const auto works = [&](deq& q) {
        if (q.push_back(0xfeed)) {
            EXPECT_EQ(q.pop_back(), u64{0xfeed});
        }
        if (q.push_front(0xbeef)) {
            EXPECT_EQ(q.pop_front(), u64{0xbeef});
        }
        EXPECT_EQ(d.heap().check(), std::vector<std::string>{});
    };
    constexpr u64 mutations = 1200;
    unsigned refusals = 0, successes = 0;
    for (u64 i = 0; i < mutations; ++i) {
        const base b = all_bases[i % std::size(all_bases)];
        const u64 a = worlds[b].anchor;
        std::string image = images[b];
        mutate_words(image, a, sizeof(c::deque_header) / 8, sim::mix(0xdec0'0bad, i), blocks);
        SCOPED_TRACE("mutation " + std::to_string(i));

        d.load(image);
        d.heap().recover();
        if (refused([&] { deq::recover(d.pool(), d.heap(), a); })) {
            ++refusals;
        } else {
            ++successes;
            d.heap().finish_recovery();
            auto q = deq::open(d.pool(), d.heap(), a);  // a recovered deque always opens
            works(q);
        }

        d.load(image);
        d.heap().recover();
        d.heap().finish_recovery();
        std::optional<deq> q;
        if (!refused([&] { q.emplace(deq::open(d.pool(), d.heap(), a)); })) works(*q);
        if (HasFailure()) break;
    }
    RecordProperty("refused", static_cast<int>(refusals));
    RecordProperty("recovered", static_cast<int>(successes));
    EXPECT_GT(refusals, mutations / 10);
    EXPECT_GT(successes, mutations / 10);
}

}  // namespace
}  // namespace ferrite
