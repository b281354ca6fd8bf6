// ferrite/containers/dfc_deque.hpp: ferrite::dfc_deque<T>, the detectable persistent
// double-ended queue of DFC (detectable flat combining), with elimination per side.
//
// Paper: Rusanovsky et al., extended version ([DFC-004], Alg. 4-5; docs/references.md).
// Engine: combining::dfc (ferrite/combining/dfc.hpp); this header supplies the deque's phase.
// Nodes {param, next (towards the rear), prev (towards the front)}; two root words: head
// (front), tail (rear).
//
// Phase: eliminate push_front/pop_front pairs and push_back/pop_back pairs separately; then,
// per side, the surplus PUSHES FIRST and then the surplus pops: front pushes, front pops,
// rear pushes, rear pops (each in thread-id order). Front push: node {param, next = head,
// prev = 0}, head.prev := node. Rear push: node {param, next = 0, prev = tail},
// tail.next := node. Pops unlink at their end; freed nodes wait for the commit.
//
// Differences from the paper (004's pseudocode; docs/references.md, DFC defects):
//   * #5: pushFront lacks head.prev := node; pushRear writes the node back before node.prev
//     is written. Here every link is written first; all write-backs happen at the commit.
//   * #6: popRear frees tempHead (never assigned) and the commit writes bot := head: here
//     popRear frees the popped tail and the tail root gets the tail.
//   * #7: Reduce starts its counters at -1 (a phantom surplus pop on an empty side) and
//     returns (Rear, Front) where the caller expects (Front, Rear): here each side's lists
//     are explicit and nothing is counted.
//   * #8: committed nodes are modified in place. Invariant: no committed version reads its
//     head's `prev` or its tail's `next` (traversals stop at the ends), and a phase writes
//     a committed node only there: pushes run before pops on each side, so a front push
//     only ever writes the committed head's prev and a rear push the current tail's next,
//     which is the committed tail or a node of this phase. (Pops then pushes on one side,
//     possible without elimination, would write the prev of a committed *interior* node.)
//     Recovery's GC walks head -> tail and checks every prev link (reachable(), reading
//     only); once every check passed, repair() clears head.prev and tail.next (fields
//     nothing reads: no write-back needed).
//
// Validation (combining/dfc_validation.hpp): besides the engine's checks of every node
// number on the walk, reachable() refuses head and tail that disagree on emptiness, a prev
// that does not mirror its next, and a list that ends before the tail (damaged_pool, region
// "dfc_deque").
//   * #9: a node freed by a pop can be reused by a push of the same phase in the paper; a
//     crash before the commit then corrupts the committed version. The engine frees only
//     after the commit (dfc.hpp).
//
// Crash consistency: as dfc_queue. LP: respond() (eliminated pairs, then the order above).
// PP: the engine's commit. Detectable usage: as dfc_stack (dfc_stack.hpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferrite/containers/dfc_stack.hpp"

namespace ferrite {

template <class T, class WaitPolicy = sync::spin_then_futex<>, class Trace = combining::dfc_no_trace>
class dfc_deque : public containers::dfc_handle<dfc_deque<T, WaitPolicy, Trace>, T, Trace> {
    using handle = containers::dfc_handle<dfc_deque, T, Trace>;
    friend handle;
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8,
                  "dfc_deque stores elements in a 64-bit node word: use a trivially copyable type "
                  "of at most 8 bytes (store an offset or an index for bigger ones)");

public:
    using value_type = T;
    enum : std::uint64_t { push_front_op = 1, pop_front_op = 2, push_back_op = 3, pop_back_op = 4 };

    struct structure {
        static constexpr unsigned root_count = 2;  // head (front), tail (rear)
        static constexpr std::uint64_t op_names = 4;  // push/pop front/back
        static constexpr std::string_view kind_name = "dfc_deque";

        template <class Phase>
        static void combine(Phase& ph) noexcept {
            using combining::dfc_status;
            namespace d = containers::dfc_detail;
            auto &pf = ph.list(0), &qf = ph.list(1), &pb = ph.list(2), &qb = ph.list(3);
            pf.clear(), qf.clear(), pb.clear(), qb.clear();
            for (auto& op : ph.ops()) {
                switch (op.name) {
                    case push_front_op: pf.push_back(&op); break;
                    case pop_front_op: qf.push_back(&op); break;
                    case push_back_op: pb.push_back(&op); break;
                    default: qb.push_back(&op); break;
                }
            }
            // LP: each respond() (eliminated pairs first), in call order; PP: the engine's commit.
            if (ph.elimination()) {
                d::eliminate(ph, pf, qf);
                d::eliminate(ph, pb, qb);
            }
            std::uint64_t head = ph.root(0), tail = ph.root(1);
            // Front: the rest of the deque lies along `next`; rear: along `prev`.
            push_at(ph, pf, head, tail, &combining::dfc_node::next, &combining::dfc_node::prev);
            pop_at(ph, qf, head, tail, &combining::dfc_node::next);
            push_at(ph, pb, tail, head, &combining::dfc_node::prev, &combining::dfc_node::next);
            pop_at(ph, qb, tail, head, &combining::dfc_node::prev);
            ph.root(0) = head;
            ph.root(1) = tail;
        }

        using link = std::uint64_t combining::dfc_node::*;
        // Push every op of `ops` at the end `end` (`other`: the opposite end); `inward` is the
        // link from an end node toward the rest of the deque, `outward` the opposite one.
        template <class Phase>
        static void push_at(Phase& ph, const std::vector<combining::dfc_op*>& ops, std::uint64_t& end,
                            std::uint64_t& other, link inward, link outward) noexcept {
            using combining::dfc_status;
            for (auto* op : ops) {
                const std::uint64_t n = ph.allocate();
                if (n == 0) {
                    ph.respond(*op, {dfc_status::full, 0});
                    continue;
                }
                auto& node = ph.node(n);
                node.param = op->param;
                node.*inward = end;
                node.*outward = 0;
                if (end == 0) {
                    other = n;
                } else {
                    ph.node(end).*outward = n;  // the committed end's outward link: never read by it
                    ph.written(end);
                }
                ph.written(n);
                end = n;
                ph.respond(*op, {dfc_status::ack, 0});
            }
        }
        // Pop one element at `end` for every op of `ops` (EMPTY once there is none).
        template <class Phase>
        static void pop_at(Phase& ph, const std::vector<combining::dfc_op*>& ops, std::uint64_t& end,
                           std::uint64_t& other, link inward) noexcept {
            using combining::dfc_status;
            for (auto* op : ops) {
                if (end == 0) {
                    ph.respond(*op, {dfc_status::empty, 0});
                    continue;
                }
                ph.respond(*op, {dfc_status::value, ph.node(end).param});
                ph.free_after_commit(end);
                if (end == other)
                    end = other = 0;
                else
                    end = ph.node(end).*inward;
            }
        }

        template <class NodeAt, class Visit>
        static void reachable(const std::uint64_t* roots, NodeAt&& node, Visit&& visit) {
            const std::uint64_t head = roots[0], tail = roots[1];
            if ((head == 0) != (tail == 0)) combining::dfc_validation::damaged(kind_name, "head and tail disagree on emptiness");
            std::uint64_t prev = 0;
            for (std::uint64_t n = head; n != 0; prev = n, n = node(n).next) {
                visit(n);  // checks the range and cycles before node(n) is read
                if (prev != 0 && node(n).prev != prev)
                    combining::dfc_validation::damaged(kind_name, "a prev link does not mirror its next link");
                if (n == tail) return;  // head.prev and tail.next are not followed: see repair
            }
            if (head != 0) combining::dfc_validation::damaged(kind_name, "the tail is not reachable from the head");
        }
        // #8: fields no committed version reads (head.prev, tail.next) are cleared.
        template <class NodeAt>
        static void repair(const std::uint64_t* roots, NodeAt&& node) noexcept {
            if (roots[0] == 0) return;
            node(roots[0]).prev = 0;
            node(roots[1]).next = 0;
        }
    };

    using engine_type = combining::dfc<structure, WaitPolicy, Trace>;
    // The same deque with another wait policy (e.g. sync::pure_spin for the no-futex ablation).
    template <class W>
    using rebind_wait = dfc_deque<T, W, Trace>;
    // create, open, recover, recover(tid), next_seq, engine: containers::dfc_handle.

    bool push_front(unsigned tid, const T& v) { return this->push_word(tid, push_front_op, v); }
    bool push_back(unsigned tid, const T& v) { return this->push_word(tid, push_back_op, v); }
    std::optional<T> pop_front(unsigned tid) { return this->pop_word(tid, pop_front_op); }
    std::optional<T> pop_back(unsigned tid) { return this->pop_word(tid, pop_back_op); }

    // Elements from the front to the rear.
    std::vector<T> unsynchronized_contents() const { return this->walk(true); }
    // Empty if the links are consistent (next and prev mirror each other between the ends).
    std::string unsynchronized_check() const {
        e_.require_open();
        const std::uint64_t head = e_.root(0), tail = e_.root(1);
        if ((head == 0) != (tail == 0)) return "head and tail disagree on emptiness";
        std::uint64_t steps = 0;
        for (std::uint64_t n = head, prev = 0; n != 0; prev = n, n = e_.node(n).next) {
            if (!e_.contains(n) || ++steps > e_.capacity()) return "a link leaves the node pool or cycles";
            if (prev != 0 && e_.node(n).prev != prev) return "a prev link does not mirror its next link";
            if (n == tail) return {};
        }
        return head == 0 ? std::string() : "the tail is not reachable from the head";
    }
private:
    explicit dfc_deque(engine_type e) : e_(std::move(e)) {}
    engine_type e_;
};

}  // namespace ferrite
