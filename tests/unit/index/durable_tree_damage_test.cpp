// index::durable_tree: a damaged region is refused with damaged_pool, never a crash: each
// field recovery reads, set to a value it cannot use, and random single-word corruptions of
// the whole region (open either refuses it or yields a tree that answers without a fault;
// run under AddressSanitizer, a wild read or write fails the test).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>

#include "durable_tree_support.hpp"
#include "ferrite/error.hpp"
#include "ferrite/index/durable_tree.hpp"
#include "ferrite/index/incll_layout.hpp"

namespace {

using namespace ferrite::index;
using ferrite::index::testing::contents;
using ferrite::index::testing::manual_epochs;
using ferrite::index::testing::region;
namespace layout = incll_layout;

constexpr std::uint64_t nodes = 1024;

// A region holding a three-level tree, a failed epoch's log entries and undo words.
std::unique_ptr<region> pristine() {
    const auto o = manual_epochs(2, 32);
    auto r = std::make_unique<region>(durable_tree::region_bytes(nodes, o));
    auto t = durable_tree::create(r->data(), r->bytes(), o);
    for (std::uint64_t k = 0; k < 1500; ++k) t->insert(k * 7, k);
    t->sync();
    for (std::uint64_t k = 0; k < 40; ++k) t->insert_or_assign(k * 7, k + 1);
    for (std::uint64_t k = 0; k < 40; ++k) t->insert(k * 7 + 3, k);
    return r->crash_image();  // the tree is not closed: the image holds an unfinished epoch
}

layout::geometry& geometry(region& r) { return *reinterpret_cast<layout::geometry*>(r.data()); }
using ferrite::index::testing::commit;
// The last leaf: not written in the unfinished epoch, so no log entry restores it over the damage.
leaf* last_leaf(region& r) {
    auto* l = reinterpret_cast<leaf*>(r.data() + geometry(r).arena_offset);  // the first leaf
    while (leaf* n = l->next.load(std::memory_order_relaxed)) l = n;
    return l;
}

template <class Poke>
void expect_refused(const char* what, Poke&& poke) {
    auto base = pristine();
    auto r = base->crash_image();
    poke(*r);
    auto lazy = r->crash_image();
    auto eager_options = manual_epochs(2, 32);
    eager_options.lazy_recovery = false;
    try {
        durable_tree::open(r->data(), r->bytes(), eager_options);
        ADD_FAILURE() << what << ": opened eagerly";
    } catch (const ferrite::damaged_pool& e) {
        EXPECT_EQ(e.region(), "incll tree") << what;
    }
    // Lazily: refused at open (the header, the root, the leftmost path), or by the first
    // operation that reaches the damaged node (here a whole scan).
    try {
        auto t = durable_tree::open(lazy->data(), lazy->bytes(), manual_epochs(2, 32));
        (void)contents(*t);
        ADD_FAILURE() << what << ": opened lazily and scanned";
    } catch (const ferrite::damaged_pool& e) {
        EXPECT_EQ(e.region(), "incll tree") << what;
    }
}

TEST(DurableTreeDamage, ThePristineImageOpens) {
    auto r = pristine();
    auto t = durable_tree::open(r->data(), r->bytes(), manual_epochs(2, 32));
    EXPECT_EQ(contents(*t).size(), 1500u);
}

TEST(DurableTreeDamage, EachFieldIsValidated) {
    expect_refused("magic", [](region& r) { geometry(r).magic = 0; });
    expect_refused("layout version", [](region& r) { geometry(r).version = 9; });
    expect_refused("region bytes", [](region& r) { geometry(r).region_bytes += 64; });
    expect_refused("shards", [](region& r) { geometry(r).shards = 1u << 20; });
    expect_refused("log entries", [](region& r) { geometry(r).log_entries = 3; });
    expect_refused("arena nodes", [](region& r) { geometry(r).arena_nodes = ~std::uint64_t{0} / 2; });
    expect_refused("durable epoch 0", [](region& r) { commit(r).durable_epoch = 0; });
    expect_refused("allocated", [](region& r) { auto& c = commit(r); c.slots[c.durable_epoch & 1].allocated = 1u << 30; });
    expect_refused("state epoch", [](region& r) { auto& c = commit(r); c.slots[c.durable_epoch & 1].state_epoch = c.durable_epoch + 5; });
    expect_refused("root offset", [](region& r) { auto& c = commit(r); c.slots[c.durable_epoch & 1].root += 8; });
    expect_refused("root beyond the region", [](region& r) { auto& c = commit(r); c.slots[c.durable_epoch & 1].root = 1ull << 40; });
    expect_refused("a child link", [](region& r) {
        auto& c = commit(r);
        auto* root = reinterpret_cast<interior*>(r.data() + c.slots[c.durable_epoch & 1].root);
        ASSERT_FALSE(root->is_leaf());
        root->children[1].store(reinterpret_cast<node_base*>(r.data() + 3), std::memory_order_relaxed);
    });
    expect_refused("a child link made a cycle", [](region& r) {
        auto& c = commit(r);
        auto* root = reinterpret_cast<interior*>(r.data() + c.slots[c.durable_epoch & 1].root);
        root->children[1].store(root, std::memory_order_relaxed);
    });
    expect_refused("interior key count", [](region& r) {
        auto& c = commit(r);
        reinterpret_cast<interior*>(r.data() + c.slots[c.durable_epoch & 1].root)->nkeys.store(99);
    });
    expect_refused("a leaf's permutation", [](region& r) {
        auto* damaged = last_leaf(r);
        damaged->node_epoch.store(0);
        damaged->perm.store(~std::uint64_t{0});
    });
    expect_refused("a leaf's permutation undo word", [](region& r) {
        auto* damaged = last_leaf(r);
        damaged->node_epoch.store(commit(r).durable_epoch + 1);
        damaged->permutation_incll.store(0);
    });
    expect_refused("a leaf's node epoch from the future", [](region& r) {
        auto* damaged = last_leaf(r);
        damaged->node_epoch.store(commit(r).durable_epoch + 2);
    });
    expect_refused("a value undo word's index", [](region& r) {
        auto* damaged = last_leaf(r);
        damaged->value_lines[0].value_incll.store(15);
    });
    expect_refused("a leaf's next link", [](region& r) {
        auto* last = last_leaf(r);
        last->next.store(last, std::memory_order_relaxed);
    });
}

TEST(DurableTreeDamage, RandomWordsNeverCrash) {
    auto base = pristine();
    std::mt19937_64 rng(21);
    const std::uint64_t words = base->bytes() / 8;
    int refused = 0, opened = 0;
    for (int trial = 0; trial < 400; ++trial) {
        auto r = base->crash_image();
        auto* w = reinterpret_cast<std::uint64_t*>(r->data());
        // Half the trials hit the header, commit line, logs and first nodes, where damage matters most.
        const std::uint64_t at = (trial % 2) ? rng() % words : rng() % std::min<std::uint64_t>(words, 4096);
        const std::uint64_t v = rng();
        w[at] = (rng() & 1) ? v : (w[at] ^ (std::uint64_t{1} << (v % 64)));
        try {
            auto t = durable_tree::open(r->data(), r->bytes(), manual_epochs(2, 32));
            ++opened;
            (void)contents(*t);
            for (std::uint64_t k = 0; k < 50; ++k) (void)t->get(k * 7);
            for (std::uint64_t k = 0; k < 50; ++k) t->insert_or_assign(k * 13 + 1, k);
        } catch (const ferrite::error&) {
            ++refused;
        }
    }
    EXPECT_GT(opened, 0);
    EXPECT_GT(refused, 0);
}

}  // namespace
