// split_order: so-keys, hashing, key order, the segmented bucket directory (lazy sentinels,
// growth, concurrent initialisation) and the O(n) recovery rebuild, on a small insert-only
// lock-free list that stands in for the algorithms' lists.
#include "ferrite/sets/split_order.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <vector>

namespace ferrite::sets {
namespace {

TEST(SplitOrder, ReverseBits) {
    EXPECT_EQ(reverse_bits(0), 0u);
    EXPECT_EQ(reverse_bits(1), 0x8000000000000000ull);
    EXPECT_EQ(reverse_bits(0x8000000000000000ull), 1u);
    EXPECT_EQ(reverse_bits(0x00000000000000F0ull), 0x0F00000000000000ull);
    std::mt19937_64 rng(3);
    for (int i = 0; i < 1000; ++i) {
        const auto x = rng();
        EXPECT_EQ(reverse_bits(reverse_bits(x)), x);
        EXPECT_EQ(std::popcount(reverse_bits(x)), std::popcount(x));
    }
}

TEST(SplitOrder, RegularKeysLieInsideTheirBucketForEveryBucketCount) {
    std::mt19937_64 rng(5);
    for (std::uint64_t buckets = 1; buckets <= 1024; buckets *= 2) {
        // Sentinels in list order have increasing so-keys.
        std::vector<std::uint64_t> sentinels;
        for (std::uint64_t i = 0; i < buckets; ++i)
            sentinels.push_back(sentinel_so_key(bucket_in_list_order(i, buckets)));
        ASSERT_TRUE(std::is_sorted(sentinels.begin(), sentinels.end()));
        EXPECT_EQ(std::set<std::uint64_t>(sentinels.begin(), sentinels.end()).size(), buckets);
        for (int k = 0; k < 200; ++k) {
            const auto h = rng();
            const auto so = regular_so_key(h);
            const auto b = h & (buckets - 1);
            EXPECT_FALSE(is_sentinel_so_key(so));
            EXPECT_GT(so, sentinel_so_key(b));
            // the next sentinel in list order (if any) is after it
            auto it = std::upper_bound(sentinels.begin(), sentinels.end(), sentinel_so_key(b));
            if (it != sentinels.end()) {
                EXPECT_LT(so, *it);
            }
        }
    }
}

TEST(SplitOrder, HashSpreadsKeysOfEverySize) {
    struct k16 { std::uint64_t a, b; };
    struct k3 { unsigned char c[3]; };
    std::array<int, 64> by_bucket8{}, by_bucket16{}, by_bucket3{};
    std::set<std::uint64_t> seen;
    for (std::uint64_t i = 0; i < 64 * 256; ++i) {
        ++by_bucket8[hash_key(i) & 63];
        ++by_bucket16[hash_key(k16{i, 7}) & 63];
        k3 small{{static_cast<unsigned char>(i), static_cast<unsigned char>(i >> 8), 1}};
        ++by_bucket3[hash_key(small) & 63];
        seen.insert(hash_key(k16{7, i}));
    }
    EXPECT_EQ(seen.size(), 64u * 256u) << "a 64-bit hash of distinct 16-byte keys collided";
    for (int b = 0; b < 64; ++b) {
        EXPECT_GT(by_bucket8[b], 128) << b;
        EXPECT_GT(by_bucket16[b], 128) << b;
        EXPECT_GT(by_bucket3[b], 128) << b;
    }
    EXPECT_NE(hash_key(k16{1, 2}), hash_key(k16{2, 1}));
}

TEST(SplitOrder, PositionOrdersBySoKeyThenKeyBytes) {
    const std::uint64_t a = 5, b = 6;
    const auto sa = make_search_key(a, set_layout::list);
    EXPECT_EQ(sa.so_key, list_so_key);
    EXPECT_EQ(compare_position(list_so_key, &a, sa), 0);
    EXPECT_LT(compare_position<std::uint64_t>(0, nullptr, sa), 0) << "the head precedes every key";
    EXPECT_NE(compare_position(list_so_key, &b, sa), 0);
    EXPECT_EQ(compare_position(list_so_key, &b, sa) < 0, std::memcmp(&b, &a, 8) < 0);
    const auto ha = make_search_key(a, set_layout::hash);
    EXPECT_EQ(ha.hash, hash_key(a));
    EXPECT_EQ(ha.so_key, regular_so_key(hash_key(a)));
    EXPECT_EQ(compare_position(ha.so_key, &a, ha), 0);
    EXPECT_GT(compare_position<std::uint64_t>(ha.so_key + 1, nullptr, ha), 0);
}

// An insert-only Harris list (no deletion), enough to exercise the directory.
struct tnode {
    std::atomic<tnode*> next{nullptr};
    std::uint64_t so_key = 0;
    std::uint64_t key = 0;
};

struct tlist {
    tnode head;  // so_key 0
    std::atomic<int> sentinels_made{0};
    ~tlist() {
        for (tnode* n = head.next.load(); n != nullptr;) {
            tnode* next = n->next.load();
            delete n;
            n = next;
        }
    }
    static int cmp(const tnode* n, std::uint64_t so, const std::uint64_t* key) {
        search_key<std::uint64_t> s{so, key, 0};
        return compare_position(n->so_key, &n->key, s);
    }
    // insert-or-find after start; returns the node with that position
    tnode* insert(tnode* start, std::uint64_t so, std::uint64_t key, bool* inserted) {
        const std::uint64_t* kp = is_sentinel_so_key(so) ? nullptr : &key;
        tnode* fresh = nullptr;
        while (true) {
            tnode* pred = start;
            tnode* curr = pred->next.load(std::memory_order_acquire);
            while (curr != nullptr && cmp(curr, so, kp) < 0) {
                pred = curr;
                curr = curr->next.load(std::memory_order_acquire);
            }
            if (curr != nullptr && cmp(curr, so, kp) == 0) {
                delete fresh;
                if (inserted) *inserted = false;
                return curr;
            }
            if (!fresh) {
                fresh = new tnode;
                fresh->so_key = so;
                fresh->key = key;
            }
            fresh->next.store(curr, std::memory_order_relaxed);
            if (pred->next.compare_exchange_strong(curr, fresh, std::memory_order_acq_rel)) {
                if (inserted) *inserted = true;
                if (is_sentinel_so_key(so)) sentinels_made.fetch_add(1);
                return fresh;
            }
        }
    }
};

struct tset {
    tlist list;
    bucket_directory<tnode> dir;
    explicit tset(bucket_directory<tnode>::growth g) : dir(&list.head, g) {}
    auto sentinel_inserter() {
        return [this](tnode* start, std::uint64_t so) { return list.insert(start, so, 0, nullptr); };
    }
    bool insert(std::uint64_t k) {
        const auto s = make_search_key(k, set_layout::hash);
        bool inserted = false;
        list.insert(dir.start_for(s.hash, sentinel_inserter()), s.so_key, k, &inserted);
        if (inserted) dir.count(+1);
        return inserted;
    }
    // found by searching from the bucket's sentinel only
    bool contains(std::uint64_t k) {
        const auto s = make_search_key(k, set_layout::hash);
        for (tnode* n = dir.start_for(s.hash, sentinel_inserter()); n != nullptr; n = n->next.load()) {
            const int c = tlist::cmp(n, s.so_key, &k);
            if (c == 0) return true;
            if (c > 0) return false;
        }
        return false;
    }
    // whole list sorted, every initialised sentinel at its place
    void check_structure() {
        std::vector<tnode*> nodes;
        for (tnode* n = &list.head; n != nullptr; n = n->next.load()) nodes.push_back(n);
        for (std::size_t i = 1; i < nodes.size(); ++i) {
            const int c = tlist::cmp(nodes[i - 1], nodes[i]->so_key,
                                     is_sentinel_so_key(nodes[i]->so_key) ? nullptr : &nodes[i]->key);
            ASSERT_LT(c, 0) << "list out of order at " << i;
        }
        const std::uint64_t buckets = dir.bucket_count();
        for (std::uint64_t b = 0; b < buckets; ++b) {
            tnode* s = dir.sentinel_if_initialised(b);
            if (s != nullptr) {
                EXPECT_EQ(s->so_key, sentinel_so_key(b)) << "bucket " << b;
            }
        }
    }
};

TEST(BucketDirectory, SegmentsCoverEveryBucketOnce) {
    using d = bucket_directory<tnode>;
    // every bucket of a table of 2^k buckets in segments 0..k, which hold exactly 2^k slots
    std::uint64_t slots = 0;
    unsigned last = 0;
    for (std::uint64_t b = 0; b < 4096; ++b) {
        const unsigned s = d::segment_of(b);
        ASSERT_LT(d::index_in_segment(b, s), d::segment_slots(s));
        if (b == 0 || s != last) {
            EXPECT_EQ(d::index_in_segment(b, s), 0u) << "segment " << s << " starts at bucket " << b;
            slots += d::segment_slots(s);
            last = s;
        }
        EXPECT_EQ(slots, std::bit_ceil(b + 1)) << "buckets 0.." << b;
    }
    EXPECT_EQ(d::segment_of(0), 0u);
    EXPECT_EQ(d::segment_of(1), 1u);
    EXPECT_EQ(d::segment_of(2), 2u);
    EXPECT_EQ(d::segment_of(3), 2u);
    EXPECT_EQ(d::segment_of(4), 3u);
    EXPECT_EQ(d::segment_of((std::uint64_t{1} << 47) - 1), 47u) << "the last bucket below the cap has a segment";
    EXPECT_LT(d::segment_of((std::uint64_t{1} << 47) - 1), d::segment_count);
}

TEST(BucketDirectory, GrowsFromOneBucketAndInitialisesLazily) {
    constexpr std::uint64_t n = 8000;
    tset t({true, 1, 2});
    EXPECT_EQ(t.dir.bucket_count(), 1u);
    for (std::uint64_t k = 0; k < n; ++k) ASSERT_TRUE(t.insert(k * 7919));
    for (std::uint64_t k = 0; k < n; ++k) ASSERT_FALSE(t.insert(k * 7919));
    EXPECT_EQ(t.dir.size(), n);
    EXPECT_GE(t.dir.bucket_count(), n / 2 / 2);
    EXPECT_LE(t.dir.bucket_count(), n / 2 * 2);
    for (std::uint64_t k = 0; k < n; ++k) ASSERT_TRUE(t.contains(k * 7919)) << k;
    EXPECT_FALSE(t.contains(3));
    t.check_structure();
    // lazily: only buckets reached have sentinels (all of them, after the contains above)
    EXPECT_LE(static_cast<std::uint64_t>(t.list.sentinels_made.load()), t.dir.bucket_count() - 1);
}

TEST(BucketDirectory, NoGrowthWhenDisabledOrBelowLoad) {
    tset off({false, 1, 2});
    for (std::uint64_t k = 0; k < 1000; ++k) off.insert(k);
    EXPECT_EQ(off.dir.bucket_count(), 1u);
    EXPECT_EQ(off.list.sentinels_made.load(), 0);
    tset lazy({true, 64, 2});  // 63 inserts: never checked
    for (std::uint64_t k = 0; k < 63; ++k) lazy.insert(k);
    EXPECT_EQ(lazy.dir.bucket_count(), 1u);
    lazy.insert(1000);
    EXPECT_EQ(lazy.dir.bucket_count(), 2u) << "checked at the 64th insert: 64 > 2 * 1";
}

TEST(BucketDirectory, ConcurrentInsertsAndInitialisation) {
    tset t({true, 1, 2});
    constexpr int threads = 4;
    constexpr std::uint64_t per = 3000;
    std::vector<std::thread> ts;
    for (int i = 0; i < threads; ++i)
        ts.emplace_back([&, i] {
            // overlapping ranges: half the keys are shared, so inserts collide
            for (std::uint64_t k = 0; k < per; ++k) t.insert(k + static_cast<std::uint64_t>(i % 2) * per / 2);
        });
    for (auto& th : ts) th.join();
    const std::uint64_t distinct = per + per / 2;
    EXPECT_EQ(t.dir.size(), distinct);
    for (std::uint64_t k = 0; k < distinct; ++k) ASSERT_TRUE(t.contains(k)) << k;
    t.check_structure();
    // one sentinel per initialised bucket: concurrent initialisers never duplicate one
    std::set<std::uint64_t> so;
    int count = 0;
    for (tnode* n = &t.list.head; n != nullptr; n = n->next.load())
        if (is_sentinel_so_key(n->so_key)) {
            ++count;
            so.insert(n->so_key);
        }
    EXPECT_EQ(static_cast<std::size_t>(count), so.size());
}

struct rebuild_policy {
    // One sentinel per bucket but 0 (the head), made up front: sentinel(b) is asked for the
    // address of a bucket that another thread may be linking. The list owns them once linked.
    explicit rebuild_policy(std::uint64_t buckets) : sentinels(buckets, nullptr) {
        for (std::uint64_t b = 1; b < buckets; ++b) sentinels[b] = new tnode;
    }
    std::vector<tnode*> sentinels;
    bool less(const tnode* a, const tnode* b) const {
        return tlist::cmp(a, b->so_key, &b->key) < 0;
    }
    tnode* sentinel(std::uint64_t b) { return sentinels[b]; }
    void init_sentinel(tnode* s, std::uint64_t so) { s->so_key = so; }
    void link(tnode* from, tnode* to, bool to_sentinel) {
        // a sentinel's so-key may be written by another thread meanwhile; a member's is not
        if (to_sentinel) {
            EXPECT_NE(to, nullptr);
        } else if (to != nullptr) {
            EXPECT_FALSE(is_sentinel_so_key(to->so_key));
        }
        from->next.store(to, std::memory_order_relaxed);
    }
};

TEST(BucketDirectory, RebuildLinksMembersAndSentinelsInSplitOrder) {
    // 5000 and 17000 members: two-level counting sort with 2 and 8 partitions; threads 2
    // and 3 link 17000 members (16384 buckets) in 2 and 3 ranges of buckets.
    for (auto [n, threads] : std::vector<std::pair<std::size_t, unsigned>>{
             {0, 1}, {1, 1}, {2, 1}, {7, 2}, {1000, 1}, {5000, 1}, {5000, 2}, {17000, 2}, {17000, 3}}) {
        tset t({true, 1, 2});
        std::vector<hashed_member<tnode>> members;
        std::mt19937_64 rng(n);
        std::set<std::uint64_t> keys;
        while (keys.size() < n) keys.insert(rng() % 10000000);
        for (auto k : keys) {
            auto* m = new tnode;
            m->key = k;
            m->so_key = regular_so_key(hash_key(k));
            members.push_back({hash_key(k), m});
        }
        std::shuffle(members.begin(), members.end(), rng);
        const auto buckets = recovered_bucket_count(n);
        rebuild_policy p(buckets);
        EXPECT_EQ(rebuild_split_ordered(t.dir, &t.list.head, members, buckets, p, threads), n);
        EXPECT_EQ(t.dir.bucket_count(), buckets);
        EXPECT_EQ(t.dir.size(), n);
        for (std::uint64_t b = 0; b < buckets; ++b) ASSERT_NE(t.dir.sentinel_if_initialised(b), nullptr);
        t.check_structure();
        for (auto k : keys) ASSERT_TRUE(t.contains(k));
        EXPECT_EQ(t.list.sentinels_made.load(), 0) << "no lazy initialisation needed after a rebuild";
        // the table keeps working and growing after the rebuild
        const std::uint64_t more = 3 * std::min<std::uint64_t>(n, 5000) + 10;
        for (std::uint64_t k = 20000000; k < 20000000 + more; ++k) ASSERT_TRUE(t.insert(k));
        t.check_structure();
    }
}

struct dedup_policy : rebuild_policy {
    using rebuild_policy::rebuild_policy;
    std::vector<std::pair<tnode*, tnode*>> dropped;
    void drop_duplicate(tnode* kept, tnode* gone) { dropped.emplace_back(kept, gone); }
};

TEST(BucketDirectory, RebuildDropsDuplicatesWhenThePolicyAsks) {
    tset t({true, 1, 2});
    std::vector<hashed_member<tnode>> members;
    for (std::uint64_t k = 0; k < 50; ++k)
        for (int copy = 0; copy < (k % 3 == 0 ? 2 : 1); ++copy) {
            auto* m = new tnode;
            m->key = k;
            m->so_key = regular_so_key(hash_key(k));
            members.push_back({hash_key(k), m});
        }
    dedup_policy p(8);
    EXPECT_EQ(rebuild_split_ordered(t.dir, &t.list.head, members, 8, p), 50u);
    EXPECT_EQ(p.dropped.size(), 17u);
    for (auto [kept, gone] : p.dropped) {
        EXPECT_EQ(kept->key, gone->key);
        EXPECT_NE(kept, gone);
        delete gone;
    }
    EXPECT_EQ(t.dir.size(), 50u);
    t.check_structure();
    for (std::uint64_t k = 0; k < 50; ++k) EXPECT_TRUE(t.contains(k));
}

TEST(BucketDirectory, RecoveredBucketCount) {
    EXPECT_EQ(recovered_bucket_count(0), 1u);
    EXPECT_EQ(recovered_bucket_count(2), 1u);
    EXPECT_EQ(recovered_bucket_count(3), 2u);
    EXPECT_EQ(recovered_bucket_count(4), 2u);
    EXPECT_EQ(recovered_bucket_count(1000), 512u);
    EXPECT_EQ(recovered_bucket_count(1025), 1024u);
}

}  // namespace
}  // namespace ferrite::sets
