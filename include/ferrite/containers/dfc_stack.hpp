// ferrite/containers/dfc_stack.hpp: ferrite::dfc_stack<T>, the detectable persistent stack
// of DFC (detectable flat combining), with push/pop elimination.
//
// Paper: Rusanovsky et al., DFC stack ([DFC-003] in docs/references.md, alg. 51-113, with
// its DFC defects). The engine (announcements, epochs, the two root copies, recovery) is
// combining::dfc (ferrite/combining/dfc.hpp); this header is the stack's part: REDUCE's
// elimination and COMBINE's push/pop application on a linked list of pool nodes.
//
// Phase (the structure hook): pair pushes with pops (each pair: push -> ACK, pop -> the
// pushed value; the list is untouched), then apply the surplus: pushes link fresh nodes
// {param, next = head} (each written back before the commit), pops unlink from the head
// (the node is freed only after the commit). One root word: top.
//
// Differences from the paper: T is any trivially copyable type of at most 8 bytes (stored in
// the node's 64-bit param); a push into an exhausted node pool answers `full` (push returns
// false) instead of failing; elimination can be switched off (dfc_options) for ablations.
//
// Crash consistency: only new nodes are written (never a node of the committed version),
// and top is written to the *inactive* root copy, so a crash before the phase's commit
// leaves the committed stack intact; recovery's GC walks top -> next from the active copy.
// Validation (combining/dfc_validation.hpp): reachable() only reads, and the engine's visit
// checks every node number (in a chunk, not seen before: a cycle) before its node is read,
// so a damaged link is refused (damaged_pool, region "dfc_stack") before recovery writes.
// LP: the respond() of each operation (eliminated pairs first, push then pop, then the
// surplus in order). PP: the engine's commit (dfc.hpp).
//
// Detectable, exactly-once usage:
//
//   // region: 64-byte aligned persistent memory, e.g. pool.root_bytes(bytes)
//   auto s = ferrite::dfc_stack<std::uint64_t>::create(region, bytes, /*threads*/ 4);
//   // thread t, op about to run: log (durably, in the application) seq = s.next_seq(t)
//   s.push(t, 7);
//   // after a crash:
//   auto s = ferrite::dfc_stack<std::uint64_t>::open(region, bytes);   // runs the recovery
//   auto r = s.recover(t);             // t's latest operation: {seq, took_effect, response}
//   if (r.seq == logged_seq && r.took_effect) { /* done: r.response is its answer */ }
//   else { /* it never took effect: run it again */ }
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ferrite/combining/dfc.hpp"
#include "ferrite/containers/dfc_handle.hpp"

namespace ferrite {

namespace containers::dfc_detail {

// Pair the operations of `pushes` with those of `pops` (both consumed from the back):
// push -> ACK, pop -> the pushed value. What remains is the surplus of one side.
template <class Phase>
void eliminate(Phase& ph, std::vector<combining::dfc_op*>& pushes, std::vector<combining::dfc_op*>& pops) noexcept {
    while (!pushes.empty() && !pops.empty()) {
        auto* pu = pushes.back();
        auto* po = pops.back();
        pushes.pop_back();
        pops.pop_back();
        ph.respond(*pu, {combining::dfc_status::ack, 0});  // LP: the push, then its pop
        ph.respond(*po, {combining::dfc_status::value, pu->param});
    }
}

}  // namespace containers::dfc_detail

template <class T, class WaitPolicy = sync::spin_then_futex<>, class Trace = combining::dfc_no_trace>
class dfc_stack : public containers::dfc_handle<dfc_stack<T, WaitPolicy, Trace>, T, Trace> {
    using handle = containers::dfc_handle<dfc_stack, T, Trace>;
    friend handle;
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8,
                  "dfc_stack stores elements in a 64-bit node word: use a trivially copyable type "
                  "of at most 8 bytes (store an offset or an index for bigger ones)");

public:
    using value_type = T;
    enum : std::uint64_t { push_op = 1, pop_op = 2 };

    // The stack's hooks for the engine (see dfc.hpp).
    struct structure {
        static constexpr unsigned root_count = 1;
        static constexpr std::uint64_t op_names = 2;  // push_op, pop_op
        static constexpr std::string_view kind_name = "dfc_stack";

        template <class Phase>
        static void combine(Phase& ph) noexcept {
            auto& pushes = ph.list(0);
            auto& pops = ph.list(1);
            pushes.clear();
            pops.clear();
            for (auto& op : ph.ops()) (op.name == push_op ? pushes : pops).push_back(&op);
            // LP: each respond() (eliminated pairs first), in call order; PP: the engine's commit.
            if (ph.elimination()) containers::dfc_detail::eliminate(ph, pushes, pops);  // REDUCE
            std::uint64_t head = ph.root(0);
            for (auto* op : pushes) {  // at most one of these two loops runs with elimination
                const std::uint64_t n = ph.allocate();
                if (n == 0) {
                    ph.respond(*op, {combining::dfc_status::full, 0});
                    continue;
                }
                auto& node = ph.node(n);
                node.param = op->param;
                node.next = head;
                ph.written(n);
                head = n;
                ph.respond(*op, {combining::dfc_status::ack, 0});
            }
            for (auto* op : pops) {
                if (head == 0) {
                    ph.respond(*op, {combining::dfc_status::empty, 0});
                    continue;
                }
                ph.respond(*op, {combining::dfc_status::value, ph.node(head).param});
                ph.free_after_commit(head);
                head = ph.node(head).next;
            }
            ph.root(0) = head;
        }

        template <class NodeAt, class Visit>
        static void reachable(const std::uint64_t* roots, NodeAt&& node, Visit&& visit) {
            for (std::uint64_t n = roots[0]; n != 0; n = node(n).next) visit(n);  // visit checks range/cycles
        }
        template <class NodeAt>
        static void repair(const std::uint64_t*, NodeAt&&) noexcept {}  // no link goes unread
    };

    using engine_type = combining::dfc<structure, WaitPolicy, Trace>;
    // The same stack with another wait policy (e.g. sync::pure_spin for the no-futex ablation).
    template <class W>
    using rebind_wait = dfc_stack<T, W, Trace>;
    // create, open, recover, recover(tid), next_seq, engine: containers::dfc_handle.

    // ---- modifiers (thread `tid` in 0..threads-1, one thread per tid at a time) ----------
    // False if the node pool is exhausted (nothing was pushed).
    bool push(unsigned tid, const T& v) { return this->push_word(tid, push_op, v); }
    // The top element, removed; nullopt if the stack was empty.
    std::optional<T> pop(unsigned tid) { return this->pop_word(tid, pop_op); }

    // ---- observers (quiescent only) --------------------------------------------------
    // Elements from the top down.
    std::vector<T> unsynchronized_contents() const { return this->walk(false); }

private:
    explicit dfc_stack(engine_type e) : e_(std::move(e)) {}
    engine_type e_;
};

}  // namespace ferrite
