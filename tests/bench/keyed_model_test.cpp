// tests/bench/keyed_model_test.cpp: every keyed bench subject against a model. The bench
// measures what the subjects do, so each must do what the operation says: a std::map
// receives the same insert / erase / put (and answers the same contains / get / scan) and
// the subject's contents (visit) and read results (read_checksum) must equal the model's,
// on one thread, on two threads updating disjoint keys, and, for the kinds that reopen
// (durable sets), after a close and a reopen with 1 and 2 recovery threads and further
// operations on the reopened structure. Subjects that cannot enumerate (visit() false)
// are listed as unchecked; the ones named in MustBeCheckable may not be. Small sizes: no
// timing here.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "bench/harness.hpp"
#include "bench/registry.hpp"

namespace fb = ferrite::bench;
namespace fs = std::filesystem;
using fb::op;

namespace {

struct scratch_dir {
    fs::path path;
    scratch_dir() {
        path = fs::path("/dev/shm") / ("ferrite-bench-model-" + std::to_string(::getpid()));
        fs::create_directories(path);
    }
    ~scratch_dir() { fs::remove_all(path); }
};

using model = std::map<std::uint64_t, std::uint64_t>;

bool supports(const fb::subject_kind& k, op o) {
    return std::find(k.supports.begin(), k.supports.end(), o) != k.supports.end();
}

// One thread's operations on keys k with k % stride == lane, k < range; applied to the
// subject and the model; returns the reads' checksum as the subject defines it.
std::uint64_t drive(const fb::subject_kind& k, fb::subject& s, model& m, unsigned tid, std::uint64_t seed,
                    unsigned ops, std::uint64_t range, unsigned stride, unsigned lane) {
    std::vector<op> choice;
    for (op o : {op::insert, op::erase, op::contains, op::get, op::put, op::scan})
        if (supports(k, o)) choice.push_back(o);
    std::uint64_t x = seed * 0x9e3779b97f4a7c15ULL + tid + 1, sum = 0;
    auto next = [&] {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x;
    };
    for (unsigned i = 0; i < ops; ++i) {
        const op o = choice[next() % choice.size()];
        const std::uint64_t key = (next() % (range / stride)) * stride + lane;
        const std::uint64_t value = next() >> 8;
        switch (o) {
        case op::insert: m.emplace(key, value); break;
        case op::erase: m.erase(key); break;
        case op::contains: sum += m.contains(key); break;
        case op::get:
            if (auto it = m.find(key); it != m.end()) sum += it->second;
            break;
        case op::put: m.insert_or_assign(key, value); break;
        case op::scan: {  // one thread only (a scan sees the other lanes' keys)
            auto it = m.lower_bound(key);
            for (std::uint64_t n = 0; n < 5 && it != m.end(); ++n, ++it) sum += it->second;
            s.run(tid, o, key, 5);
            continue;
        }
        default: break;
        }
        s.run(tid, o, key, value);
    }
    return sum;
}

model contents(const fb::subject& s) {
    model got;
    EXPECT_TRUE(s.visit([&](std::uint64_t k, std::uint64_t v) { EXPECT_TRUE(got.emplace(k, v).second) << k; }));
    return got;
}

model prefilled(std::uint64_t n) {
    model m;  // the subject's prefill: prefill_key(i) with some value; values are reset below
    for (std::uint64_t i = 0; i < n; ++i) m.emplace(fb::prefill_key(i), 0);
    return m;
}

// The prefill's values are the subject's own (any value): read them into the model.
void adopt_prefill_values(const fb::subject& s, model& m) {
    s.visit([&](std::uint64_t k, std::uint64_t v) {
        if (auto it = m.find(k); it != m.end()) it->second = v;
    });
}

constexpr std::uint64_t prefill_n = 100, key_range = 256;

}  // namespace

TEST(BenchKeyedModel, EveryKeyedSubjectMatchesAMapOnOneThread) {
    scratch_dir dir;
    std::vector<std::string> unchecked;
    for (const auto& k : fb::subjects()) {
        if (k.family != fb::op_family::keyed) continue;
        SCOPED_TRACE(k.name);
        fb::subject_config c{1, prefill_n, dir.path, {}};
        c.capacity_hint = key_range;
        auto s = k.make(c);
        ASSERT_TRUE(s);
        auto m = prefilled(prefill_n);
        if (!s->visit([](std::uint64_t, std::uint64_t) {})) {
            unchecked.push_back(k.name);
            continue;
        }
        adopt_prefill_values(*s, m);
        EXPECT_EQ(contents(*s), m) << "after the prefill";
        s->attach(0);  // the subject contract: a worker attaches before it runs operations
        const auto sum = drive(k, *s, m, 0, 7, 3000, key_range, 1, 0);
        s->detach(0);
        EXPECT_EQ(contents(*s), m);
        EXPECT_EQ(s->read_checksum(0).value_or(sum), sum);
        if (!k.reopens) continue;
        for (unsigned threads : {1u, 2u}) {
            s->close_for_reopen();
            EXPECT_EQ(s->reopen(threads), m.size()) << threads << " recovery threads";
            EXPECT_EQ(contents(*s), m) << "after a reopen with " << threads << " recovery threads";
            s->attach(0);
            drive(k, *s, m, 0, 11 + threads, 500, key_range, 1, 0);
            s->detach(0);
            EXPECT_EQ(contents(*s), m) << "updates after the reopen";
        }
    }
    for (const auto& n : unchecked) std::cout << "unchecked (cannot enumerate): " << n << '\n';
}

TEST(BenchKeyedModel, TwoThreadsOnDisjointKeysMatchTheirModels) {
    scratch_dir dir;
    for (const auto& k : fb::subjects()) {
        if (k.family != fb::op_family::keyed) continue;
        SCOPED_TRACE(k.name);
        fb::subject_config c{2, prefill_n, dir.path, {}};
        c.capacity_hint = key_range;
        auto s = k.make(c);
        if (!s->visit([](std::uint64_t, std::uint64_t) {})) continue;
        fb::subject_kind no_scan = k;  // a scan would read the other thread's keys
        no_scan.supports.erase(std::remove(no_scan.supports.begin(), no_scan.supports.end(), op::scan),
                               no_scan.supports.end());
        auto all = prefilled(prefill_n);
        adopt_prefill_values(*s, all);
        model lanes[2];
        for (const auto& [key, v] : all) lanes[key % 2].emplace(key, v);
        std::uint64_t sums[2] = {};
        std::thread t1([&] {
            s->attach(1);
            sums[1] = drive(no_scan, *s, lanes[1], 1, 3, 3000, key_range, 2, 1);
            s->detach(1);
        });
        s->attach(0);
        sums[0] = drive(no_scan, *s, lanes[0], 0, 3, 3000, key_range, 2, 0);
        s->detach(0);
        t1.join();
        model want = lanes[0];
        want.insert(lanes[1].begin(), lanes[1].end());
        EXPECT_EQ(contents(*s), want);
        for (unsigned t : {0u, 1u}) EXPECT_EQ(s->read_checksum(t).value_or(sums[t]), sums[t]) << "thread " << t;
    }
}

TEST(BenchKeyedModel, MustBeCheckable) {
    scratch_dir dir;
    for (const char* n : {"map-mutex", "ordered-map-mutex", "soft-hash", "soft-list", "linkfree-hash",
                          "linkfree-list", "volatile-hash", "volatile-tree", "tree-volatile", "tree-incll", "tree-volatile-k16",
                          "tree-incll-k16"}) {
        const auto* k = fb::find_subject(n);
        ASSERT_NE(k, nullptr) << n;
        fb::subject_config c{1, 10, dir.path, {}};
        c.capacity_hint = 64;
        const auto s = k->make(c);
        EXPECT_TRUE(s->visit([](std::uint64_t, std::uint64_t) {})) << n;
        EXPECT_TRUE(s->read_checksum(0).has_value()) << n;
    }
}
