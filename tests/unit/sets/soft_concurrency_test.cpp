// soft_table under threads: every thread owns a key class (exact per-thread models) and all
// threads also fight over a few shared keys (insert, erase, upsert, reads), in both layouts,
// with the hash table growing meanwhile; then the contents agree with the models, survive a
// reopen, and shared keys hold a value some thread wrote.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "sets/set_history.hpp"  // crash/: the crash targets' key-by-key linearizability checker
#include "soft_test_support.hpp"

namespace ferrite::sets::test {
namespace {

using u64_map = soft_table<std::uint64_t, std::uint64_t>;

class SoftConcurrency : public soft_pool_test, public ::testing::WithParamInterface<set_layout> {};

TEST_P(SoftConcurrency, OwnedKeysMatchModelsAndSharedKeysStayConsistent) {
    constexpr unsigned threads = 4;
    constexpr int ops = 3000;
    constexpr std::uint64_t shared_keys = 8;  // keys 0..7, values tagged with the writer
    auto t = std::make_unique<u64_map>(create<u64_map>(GetParam(), {0, 4096, 4}));
    std::vector<std::map<std::uint64_t, std::uint64_t>> models(threads);
    std::atomic<bool> bad_shared_value{false};
    std::vector<std::thread> ts;
    for (unsigned id = 0; id < threads; ++id)
        ts.emplace_back([&, id] {
            std::mt19937_64 rng(id + 1);
            auto& model = models[id];
            for (int i = 0; i < ops; ++i) {
                if (rng() % 3 == 0) {  // shared keys: any outcome, but values must be genuine
                    const std::uint64_t k = rng() % shared_keys;
                    const std::uint64_t v = (k << 32) | (id << 16) | static_cast<std::uint64_t>(i & 0xffff);
                    switch (rng() % 4) {
                        case 0: t->insert(k, v); break;
                        case 1: t->erase(k); break;
                        case 2: t->insert_or_assign(k, v); break;
                        default:
                            if (auto got = t->get(k); got && (*got >> 32) != k) bad_shared_value = true;
                    }
                    continue;
                }
                const std::uint64_t k = 100 + (rng() % 200) * threads + id;  // owned by this thread
                const std::uint64_t v = rng();
                switch (rng() % 4) {
                    case 0: ASSERT_EQ(t->insert(k, v), model.emplace(k, v).second); break;
                    case 1: ASSERT_EQ(t->erase(k), model.erase(k) == 1); break;
                    case 2: {
                        const bool fresh = !model.contains(k);
                        model[k] = v;
                        ASSERT_EQ(t->insert_or_assign(k, v), fresh);
                        break;
                    }
                    default: {
                        auto it = model.find(k);
                        ASSERT_EQ(t->get(k), it == model.end() ? std::nullopt : std::optional(it->second));
                    }
                }
            }
        });
    for (auto& th : ts) th.join();
    EXPECT_FALSE(bad_shared_value.load());
    auto check = [&] {
        std::map<std::uint64_t, std::uint64_t> owned;
        std::size_t shared = 0;
        std::size_t visits = 0;
        t->for_each([&](const std::uint64_t& k, const std::uint64_t& v) {
            ++visits;
            if (k < shared_keys) {
                ++shared;
                EXPECT_EQ(v >> 32, k);
            } else {
                owned[k] = v;
            }
        });
        std::map<std::uint64_t, std::uint64_t> expected;
        for (auto& m : models) expected.insert(m.begin(), m.end());
        EXPECT_TRUE(owned == expected);
        EXPECT_EQ(t->size(), expected.size() + shared);
        EXPECT_EQ(visits, expected.size() + shared);
    };
    check();
    t.reset();
    t = std::make_unique<u64_map>(open<u64_map>(GetParam(), {2, 4096, 4}));
    EXPECT_EQ(t->last_recovery().duplicates, 0u);
    check();
}

// Real threads on three keys, every response checked: the histories of each key must be
// linearizable (the crash targets' checker, set_history.hpp, with the table never crashing).
// The crash simulator's token scheduler switches threads only at persistence events; here
// they interleave anywhere (though rarely inside a window of a few instructions: an erase
// that lost a present key to a replacement finishing between its search and its mark was
// found by random crash moments, which stop threads at any instruction, not by this test).
TEST_P(SoftConcurrency, HistoriesOfSharedKeysAreLinearizable) {
    using namespace crash::sets_check;
    constexpr unsigned threads = 4;
    constexpr std::uint64_t keys = 3, ops = 40, rounds = 40;  // 53 or 54 operations per key
    auto t = std::make_unique<u64_map>(create<u64_map>(GetParam(), {0, 4096, 2}));
    for (std::uint64_t round = 0; round < rounds; ++round) {
        const std::uint64_t base = round * keys;
        std::atomic<std::uint64_t> clock{0};
        std::vector<std::vector<event>> events(threads, std::vector<event>(ops));
        std::vector<std::thread> ts;
        std::atomic<unsigned> ready{0};
        for (unsigned id = 0; id < threads; ++id)
            ts.emplace_back([&, id] {
                std::mt19937_64 rng(round * 31 + id);
                ready.fetch_add(1);
                while (ready.load() < threads) std::this_thread::yield();  // start together
                for (std::uint64_t i = 0; i < ops; ++i) {
                    event& e = events[id][i];
                    e.tid = id;
                    e.index = i;
                    e.returned = true;
                    e.what.key = (i + id) % keys;  // balanced: at most 54 per key
                    e.what.value = (std::uint64_t{id + 1} << 32) | (i + 1);
                    const auto k = base + e.what.key;
                    const auto pick = rng() % 5;
                    e.what.kind = pick == 0 ? op_kind::insert : pick == 1 ? op_kind::erase : pick == 2 ? op_kind::assign
                                : pick == 3 ? op_kind::get : op_kind::contains;
                    e.invoked = clock.fetch_add(1) + 1;
                    switch (e.what.kind) {
                        case op_kind::insert: e.got.flag = t->insert(k, e.what.value); break;
                        case op_kind::erase: e.got.flag = t->erase(k); break;
                        case op_kind::assign: e.got.flag = t->insert_or_assign(k, e.what.value); break;
                        case op_kind::get: e.got.value = t->get(k); break;
                        default: e.got.flag = t->contains(k);
                    }
                    e.returned_at = clock.fetch_add(1) + 1;
                }
            });
        for (auto& th : ts) th.join();
        std::vector<event> all;
        for (auto& v : events) all.insert(all.end(), v.begin(), v.end());
        std::map<std::uint64_t, std::uint64_t> final_state;
        t->for_each([&](const std::uint64_t& k, const std::uint64_t& v) {
            if (k >= base && k < base + keys) final_state[k - base] = v;
        });
        const auto problem = check_history(all, final_state, keys);
        ASSERT_TRUE(problem.empty()) << "round " << round << ": " << problem;
    }
}

INSTANTIATE_TEST_SUITE_P(Layouts, SoftConcurrency, ::testing::Values(set_layout::list, set_layout::hash),
                         [](const ::testing::TestParamInfo<set_layout>& p) { return p.param == set_layout::list ? "list" : "hash"; });

}  // namespace
}  // namespace ferrite::sets::test
