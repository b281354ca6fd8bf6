// ferrite/combining/dfc_state.hpp: the volatile state of one DFC engine (combining::dfc).
//
// Everything of the engine that lives in DRAM: the papers' cLock (the combiner lock) and
// rLock (the recovery lock, with the flag that recovery ran), the sticky combiner's words
// (sticky_combiner.hpp), the node store's binding to the chunk table and its volatile bitmaps
// (dfc_node_store.hpp), and the combiner's scratch (the collected operations, the
// structure's lists, the working roots, the nodes to write back and to free after the
// commit). The engine keeps it behind a unique_ptr, so that its address (the lock that
// waiters sleep on) survives moving the engine.
//
// Crash consistency: nothing here survives a crash, and nothing needs to: recovery rebuilds
// the bitmap from the nodes reachable from the active roots (dfc_recovery.hpp), the locks
// start free and the scratch empty.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "ferrite/combining/dfc_layout.hpp"
#include "ferrite/combining/dfc_node_store.hpp"
#include "ferrite/combining/sticky_combiner.hpp"
#include "ferrite/combining/dfc_types.hpp"
#include "ferrite/combining/publication.hpp"
#include "ferrite/combining/stats.hpp"
#include "ferrite/sync/futex_lock.hpp"

namespace ferrite::combining {

template <class WaitPolicy, class Trace>
struct dfc_volatile_state {
    alignas(line) sync::futex_lock<WaitPolicy> lock;  // cLock
    alignas(line) std::atomic<unsigned> last_combiner{sticky_combiner::no_combiner};  // tid that ran the last phase
    std::atomic<unsigned> deferral{sticky_combiner::max_deferral};  // adaptive: see sticky_combiner.hpp
    alignas(line) std::mutex recovery;                // rLock
    bool recovered = false;
    unsigned threads = 0;  // the header's, validated at open
    dfc_options options;
    Trace trace FERRITE_FLOW_SKIP;
    dfc_node_store nodes;  // chunk table binding + volatile bitmaps
    std::uint64_t work_roots[dfc_max_roots] FERRITE_FLOW_SKIP = {};
    std::vector<dfc_op> ops FERRITE_FLOW_SKIP;  // combiner's scratch
    std::vector<dfc_op*> lists[4] FERRITE_FLOW_SKIP;  // the structure's (dfc_phase::list)
    std::vector<std::uint64_t> dirty FERRITE_FLOW_SKIP, freed FERRITE_FLOW_SKIP;
    std::vector<const void*> lines FERRITE_FLOW_SKIP;
    stats_recorder stats FERRITE_FLOW_SKIP;
};

}  // namespace ferrite::combining
