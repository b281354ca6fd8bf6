// PFC's publication lifecycle: many instances per thread, publications of exited threads
// reclaimed by the combiner's cleanup, instances destroyed before or after their threads
// (ASan reports a leak or a use after free if the reference counting is wrong).
#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "counting_structure.hpp"
#include "ferrite/combining/pfc.hpp"

namespace ferrite::combining {
namespace {

using ferrite_test::counting_structure;
// Cleanup every 4 passes, publications stale after 8: small, so that cleanup really happens.
using small_pfc = pfc<counting_structure, sync::spin_then_futex<>, 4, 8>;

TEST(PfcLifecycle, ManyInstancesPerThread) {
    std::vector<std::unique_ptr<small_pfc>> instances;
    for (int i = 0; i < 100; ++i) instances.push_back(std::make_unique<small_pfc>());
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t)
        ts.emplace_back([&, t] {
            for (int i = 0; i < 2000; ++i) instances[(i * 7 + t) % instances.size()]->apply(1);
        });
    for (auto& th : ts) th.join();
    std::uint64_t total = 0;
    for (auto& e : instances) total += e->structure().value;
    EXPECT_EQ(total, 4u * 2000u);
}

TEST(PfcLifecycle, ExitedThreadsPublicationsAreReclaimed) {
    small_pfc e;
    for (int wave = 0; wave < 10; ++wave) {
        std::vector<std::thread> ts;
        for (int t = 0; t < 4; ++t)
            ts.emplace_back([&] {
                for (int i = 0; i < 20; ++i) e.apply(1);
            });
        for (auto& th : ts) th.join();
    }
    // This thread keeps combining alone: cleanup unlinks what is left of the 40 exited
    // threads' publications (ASan reports any that is never freed).
    for (int i = 0; i < 200; ++i) e.apply(1);
    EXPECT_EQ(e.linked_publications(), 1u) << "only the living thread's publication remains";
    EXPECT_EQ(e.structure().value, 10u * 4u * 20u + 200u);
}

TEST(PfcLifecycle, IdlePublicationIsUnlinkedAndRelinkedOnNextUse) {
    small_pfc e;
    std::atomic<int> phase{0};
    std::thread sleeper([&] {
        e.apply(1);
        phase = 1;
        while (phase.load() != 2) std::this_thread::yield();
        EXPECT_EQ(e.apply(1), 101u) << "a re-linked publication is served";
    });
    while (phase.load() != 1) std::this_thread::yield();
    for (int i = 0; i < 100; ++i) e.apply(1);  // the sleeper's publication goes stale
    EXPECT_EQ(e.linked_publications(), 1u);
    phase = 2;
    sleeper.join();
}

TEST(PfcLifecycle, InstanceDestroyedBeforeItsThreadsExit) {
    std::atomic<int> phase{0};
    auto e = std::make_unique<small_pfc>();
    std::thread user([&] {
        e->apply(1);
        phase = 1;
        while (phase.load() != 2) std::this_thread::yield();
        small_pfc other;  // a new entry in this thread's map drops the orphaned one
        other.apply(1);
    });
    while (phase.load() != 1) std::this_thread::yield();
    e.reset();
    phase = 2;
    user.join();
}

}  // namespace
}  // namespace ferrite::combining
