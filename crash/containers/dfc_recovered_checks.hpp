// crash/containers/dfc_recovered_checks.hpp: what the DFC crash targets check of a recovered
// structure besides its history (dfc_history.hpp): detectability, per thread, and the heap
// its node pool grew into.
//
// Detectability, per thread t with k operations returned at the crash: recovered(t) reports
// seq k, or k + 1 if operation k + 1 was pending; seq k (k > 0): took effect, with the
// response the thread saw; the reported name and param are those of the thread's operation
// with that seq (the workload's op_of). This is what the exactly-once pattern of docs/dfc.md
// relies on (DFC defect #10 in docs/references.md).
//
// Heap: buddy_heap::check() finds it consistent, and its live blocks are exactly the node
// chunks the structure's chunk table names: no leaked chunk, no block left pending.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "dfc_target_kinds.hpp"
#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/combining/dfc.hpp"
#include "ferrite/sim/progress.hpp"

namespace ferrite::crash::dfc_check {

using responses = std::vector<std::vector<dfc_response>>;  // [thread][operation index]

// rec[t]: what recovery reports to thread t; observed[t][i]: what its operation i returned;
// op_of(t, i): that operation's {name, param}.
template <class OpOf>
std::string check_detectability(const std::vector<combining::dfc_recovered_op>& rec,
                                const sim::progress_snapshot& at_crash, const responses& observed, OpOf&& op_of) {
    for (unsigned t = 0; t < rec.size(); ++t) {
        const auto k = at_crash[t].completed;
        const auto& r = rec[t];
        const bool pending = at_crash[t].pending;
        if (!(r.seq == k || (pending && r.seq == k + 1)))
            return "detectability: thread " + std::to_string(t) + " recovered seq " + std::to_string(r.seq) +
                   " but " + std::to_string(k) + " operations returned" + (pending ? " (one pending)" : "");
        if (r.seq == k && k > 0) {
            if (!r.took_effect) return "detectability: " + op_text(t, k) + " returned but is reported as not taken";
            if (!(r.response == observed[t][k - 1]))
                return "detectability: " + op_text(t, k) + " recovered a response other than the one it returned";
        }
        if (r.seq > 0) {
            const auto [name, v] = op_of(t, r.seq - 1);
            if (r.name != name || (is_push(name) && r.param != v))
                return "detectability: " + op_text(t, r.seq) + " recovered with another name or parameter";
        }
    }
    return {};
}

// The heap is consistent and holds exactly the node chunks of the region at `region`.
inline std::string check_heap(const alloc::buddy_heap& heap, void* region, unsigned threads) {
    if (auto problems = heap.check(); !problems.empty()) return "heap: " + problems.front();
    const auto* table = combining::dfc_region::at(region, threads).chunks;
    std::set<std::uint64_t> chunks;
    for (auto off : table->offset)
        if (off != 0) chunks.insert(off);
    std::size_t live = 0;
    for (const auto& b : heap.blocks()) {
        if (b.state == alloc::block_state::free) continue;
        if (b.state != alloc::block_state::live)
            return std::string("heap: a block is still ") + alloc::to_string(b.state) + " after recovery";
        if (!chunks.contains(b.offset)) return "heap: leak: the live block at heap offset " + std::to_string(b.offset) + " is no node chunk";
        ++live;
    }
    if (live != chunks.size()) return "heap: a node chunk of the table is not a live block";
    return {};
}

}  // namespace ferrite::crash::dfc_check
