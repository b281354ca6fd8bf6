// The catalog's view of DFC structures (containers/dfc_checks.hpp): validate_dfc and
// dfc_owned_blocks given a pool, a heap and an anchor, and catalog::validate_object using
// them, so that `ferrite pool check` (check_objects) and catalog::recover refuse a damaged
// DFC region, naming the kind and the object, before anything is written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "catalog_test_support.hpp"
#include "ferrite/containers/catalog.hpp"
#include "ferrite/containers/dfc_checks.hpp"

namespace ferrite {
namespace {

using ferrite_test::CatalogTest;
using u64 = std::uint64_t;

std::string file_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

class DfcCatalogChecks : public CatalogTest {
protected:
    // A grown stack, queue and deque under the catalog; their anchors, in creation order.
    void make_three() {
        {
            catalog names(*pool_, *heap_);
            auto s = names.open_dfc_stack<u64>("s", 2, 8);
            auto q = names.open_dfc_queue<u64>("q", 2, 8);
            auto d = names.open_dfc_deque<u64>("d", 2, 8);
            for (u64 i = 0; i < 100; ++i) {
                ASSERT_TRUE(s->push(0, i));
                ASSERT_TRUE(q->enqueue(0, i));
                ASSERT_TRUE(d->push_back(0, i));
            }
        }
        // The anchors, as the catalog's entries hold them (no catalog open now).
        const auto dir = alloc::name_directory::open_or_create(*pool_, *heap_);
        for (const char* name : {"s", "q", "d"})
            for (const auto& e : dir.entries())
                if (e.name_view() == name) anchors_.push_back(e.anchor);
        ASSERT_EQ(anchors_.size(), 3u);
    }
    // Every byte of the three regions.
    std::string regions() const {
        std::string out;
        for (const u64 a : anchors_)
            out.append(reinterpret_cast<const char*>(pool_->base() + a), heap_->block_size(pool_->base() + a));
        return out;
    }
    std::vector<u64> anchors_;
};

TEST_F(DfcCatalogChecks, IntactStructuresValidateAndListTheirRegionAndGrownChunks) {
    make_three();
    const auto& pool = *pool_;
    const auto& heap = *heap_;
    EXPECT_NO_THROW(containers::validate_dfc<dfc_stack<u64>>(pool, heap, anchors_[0]));
    EXPECT_NO_THROW(containers::validate_dfc<dfc_queue<u64>>(pool, heap, anchors_[1]));
    EXPECT_NO_THROW(containers::validate_dfc<dfc_deque<u64>>(pool, heap, anchors_[2]));
    std::vector<u64> all;
    const auto add = [&](std::vector<u64> b, u64 anchor) {
        ASSERT_GT(b.size(), 1u) << "100 elements in 8 nodes: the node pool grew";
        EXPECT_EQ(b[0], anchor) << "the region first";
        for (const u64 off : b) EXPECT_EQ(heap.state(pool.base() + off), alloc::block_state::live);
        all.insert(all.end(), b.begin(), b.end());
    };
    add(containers::dfc_owned_blocks<dfc_stack<u64>>(pool, heap, anchors_[0]), anchors_[0]);
    add(containers::dfc_owned_blocks<dfc_queue<u64>>(pool, heap, anchors_[1]), anchors_[1]);
    add(containers::dfc_owned_blocks<dfc_deque<u64>>(pool, heap, anchors_[2]), anchors_[2]);
    std::sort(all.begin(), all.end());
    EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "no block owned twice";
    catalog names(*pool_, *heap_);
    EXPECT_NO_THROW(names.validate());
    for (const auto& c : names.check_objects()) EXPECT_EQ(c.problem, "") << c.name;
}

TEST_F(DfcCatalogChecks, TheAnchorIsCheckedBeforeTheRegionIsRead) {
    make_three();
    const auto refused = [&](u64 anchor, const char* why) {
        try {
            containers::validate_dfc<dfc_queue<u64>>(*pool_, *heap_, anchor);
            ADD_FAILURE() << why << ": accepted";
        } catch (const damaged_pool& e) {
            EXPECT_EQ(e.kind(), pool_errc::damaged_object) << why;
            EXPECT_EQ(e.region(), "dfc_queue") << why;
            EXPECT_NE(std::string(e.what()).find("anchor"), std::string::npos) << e.what();
        }
    };
    refused(anchors_[1] + 8, "misaligned");
    refused(pool_->size() - 32, "beyond the pool");
    refused(pool_->size() + 4096, "far beyond the pool");
    refused(anchors_[1] + 64, "inside a block");
    EXPECT_THROW(containers::validate_dfc<dfc_queue<u64>>(*pool_, *heap_, 0), error) << "nothing created";
    try {  // the stack's region read as a queue: its header says 1 root word
        containers::validate_dfc<dfc_queue<u64>>(*pool_, *heap_, anchors_[0]);
        ADD_FAILURE() << "a stack validated as a queue";
    } catch (const damaged_pool& e) {
        EXPECT_EQ(e.region(), "dfc_queue");
    }
}

// The fuzzer header (threads = 2^58) and a root beyond every chunk (which only the
// whole validation, not the header's, finds): `pool check` names the object and the kind,
// recovery refuses before writing, and the region is byte for byte as it was.
TEST_F(DfcCatalogChecks, DamagedRegionsAreReportedAndRefusedByTheCatalogUnchanged) {
    make_three();
    {
        auto s = combining::dfc_region::at(pool_->base() + anchors_[0], 2);
        auto q = combining::dfc_region::at(pool_->base() + anchors_[1], 2);
        s.roots[0].node[0].store((u64{1} << 32) | 999'999, std::memory_order_relaxed);
        s.roots[1].node[0].store((u64{1} << 32) | 999'999, std::memory_order_relaxed);
        q.header->threads = u64{1} << 58;
    }
    heap_.reset();
    pool_.reset();
    const auto before = file_bytes(path_);
    {
        auto ro = pmem::pool::inspect(path_);
        auto heap = alloc::buddy_heap::open(ro, ro.heap_offset());
        catalog names(ro, heap);
        const auto checks = names.check_objects();
        ASSERT_EQ(checks.size(), 3u);
        EXPECT_NE(checks[0].problem.find("dfc_stack 's'"), std::string::npos) << checks[0].problem;
        EXPECT_NE(checks[0].problem.find("root word 0"), std::string::npos) << checks[0].problem;
        EXPECT_NE(checks[1].problem.find("dfc_queue 'q'"), std::string::npos) << checks[1].problem;
        EXPECT_NE(checks[1].problem.find("thread count 288230376151711744"), std::string::npos) << checks[1].problem;
        EXPECT_EQ(checks[2].problem, "");
        try {
            names.validate();
            ADD_FAILURE() << "validated";
        } catch (const damaged_pool& e) {
            EXPECT_EQ(e.kind(), pool_errc::damaged_object);
            EXPECT_EQ(e.region(), "dfc_stack");
            EXPECT_EQ(e.object(), "s");
        }
    }
    EXPECT_EQ(file_bytes(path_), before) << "inspection wrote";
    reopen(/*recover*/ false);
    const auto region_before = regions();
    try {
        catalog::recover_pool(*pool_, *heap_);
        ADD_FAILURE() << "recovered";
    } catch (const damaged_pool& e) {
        EXPECT_EQ(e.kind(), pool_errc::damaged_object);
        EXPECT_EQ(e.region(), "dfc_stack");
        EXPECT_EQ(e.object(), "s");
    }
    EXPECT_EQ(regions(), region_before) << "recovery wrote into the regions";
}

}  // namespace
}  // namespace ferrite
