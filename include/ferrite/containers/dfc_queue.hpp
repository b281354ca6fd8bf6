// ferrite/containers/dfc_queue.hpp: ferrite::dfc_queue<T>, the detectable persistent FIFO
// queue of DFC (detectable flat combining).
//
// Paper: Rusanovsky et al., extended version with queue and deque ([DFC-004] in
// docs/references.md, appendix, Alg. 3). Engine: combining::dfc (ferrite/combining/dfc.hpp);
// this header supplies the queue's phase.
//
// Phase: no elimination (an enqueue and a dequeue of one phase do not cancel in a FIFO
// queue unless it is empty). All enqueues, then all dequeues, in thread-id order. Enqueue:
// a fresh node {param, next = 0}; if the queue is empty head := node, else tail.next := node
// and the OLD TAIL is written back too (it is part of the new version); tail := node.
// Dequeue: answer head.param, head := head.next (head == tail: both := 0); the node is freed
// after the commit. Two root words: head, tail, in the inactive copy as usual.
//
// Differences from the paper (004's pseudocode; docs/references.md, DFC defects):
//   * #3: 004's Collect returns the last index and Combine reads it as a count, so a lone
//     enqueue is never applied: here the hooks iterate over the collected operations.
//   * #4: 004 never links tail.next := node (nor head := node on an empty queue) and never
//     writes the old tail back: both are done here.
//   * #8: the old tail is modified in place, although it belongs to the committed version.
//     Invariant that makes this safe: no committed version ever reads its tail's `next`
//     (traversals stop AT the tail), so the in-place write is invisible to the committed
//     version if the phase crashes; recovery's GC walks head -> tail (reachable(), reading
//     only) and, once every check passed, repair() clears tail.next (a field nothing
//     reads: no write-back needed).
//
// Validation (combining/dfc_validation.hpp): besides the engine's checks of every node
// number on the walk (in a chunk; no cycle), reachable() refuses head and tail that disagree
// on emptiness and a list that ends before the tail (damaged_pool, region "dfc_queue"). A
// tail that is an interior node reads as a shorter queue: the media cannot tell it apart.
//
// Crash consistency: nodes of the committed version are never written except tail.next
// (above); frees wait for the commit (dfc.hpp), so no committed node is reused by the phase
// that unlinks it. LP: respond() (enqueues, then dequeues, in thread order). PP: the engine's
// commit.
//
// Detectable usage: as dfc_stack (dfc_stack.hpp): enqueue/dequeue, then after a crash
// open(), recover(tid) -> {seq, took_effect, response}.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferrite/containers/dfc_stack.hpp"

namespace ferrite {

template <class T, class WaitPolicy = sync::spin_then_futex<>, class Trace = combining::dfc_no_trace>
class dfc_queue : public containers::dfc_handle<dfc_queue<T, WaitPolicy, Trace>, T, Trace> {
    using handle = containers::dfc_handle<dfc_queue, T, Trace>;
    friend handle;
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8,
                  "dfc_queue stores elements in a 64-bit node word: use a trivially copyable type "
                  "of at most 8 bytes (store an offset or an index for bigger ones)");

public:
    using value_type = T;
    enum : std::uint64_t { enqueue_op = 1, dequeue_op = 2 };

    struct structure {
        static constexpr unsigned root_count = 2;  // head, tail
        static constexpr std::uint64_t op_names = 2;  // enqueue_op, dequeue_op
        static constexpr std::string_view kind_name = "dfc_queue";

        template <class Phase>
        static void combine(Phase& ph) noexcept {
            std::uint64_t head = ph.root(0), tail = ph.root(1);
            // LP: each respond() below, in call order (the engine's commit is the PP).
            for (auto& op : ph.ops()) {  // all enqueues first
                if (op.name != enqueue_op) continue;
                const std::uint64_t n = ph.allocate();
                if (n == 0) {
                    ph.respond(op, {combining::dfc_status::full, 0});
                    continue;
                }
                auto& node = ph.node(n);
                node.param = op.param;
                node.next = 0;
                ph.written(n);
                if (tail == 0) {
                    head = n;
                } else {
                    ph.node(tail).next = n;  // in place: the committed version never reads it
                    ph.written(tail);
                }
                tail = n;
                ph.respond(op, {combining::dfc_status::ack, 0});
            }
            for (auto& op : ph.ops()) {
                if (op.name != dequeue_op) continue;
                if (head == 0) {
                    ph.respond(op, {combining::dfc_status::empty, 0});
                    continue;
                }
                ph.respond(op, {combining::dfc_status::value, ph.node(head).param});
                ph.free_after_commit(head);
                if (head == tail)
                    head = tail = 0;
                else
                    head = ph.node(head).next;
            }
            ph.root(0) = head;
            ph.root(1) = tail;
        }

        template <class NodeAt, class Visit>
        static void reachable(const std::uint64_t* roots, NodeAt&& node, Visit&& visit) {
            const std::uint64_t head = roots[0], tail = roots[1];
            if ((head == 0) != (tail == 0)) combining::dfc_validation::damaged(kind_name, "head and tail disagree on emptiness");
            for (std::uint64_t n = head; n != 0; n = node(n).next) {
                visit(n);  // checks the range and cycles before node(n) is read
                if (n == tail) return;  // tail.next is not followed: see repair
            }
            if (head != 0) combining::dfc_validation::damaged(kind_name, "the tail is not reachable from the head");
        }
        // #8: a crashed phase may have linked past the tail; nothing reads tail.next.
        template <class NodeAt>
        static void repair(const std::uint64_t* roots, NodeAt&& node) noexcept {
            if (roots[1] != 0) node(roots[1]).next = 0;
        }
    };

    using engine_type = combining::dfc<structure, WaitPolicy, Trace>;
    // The same queue with another wait policy (e.g. sync::pure_spin for the no-futex ablation).
    template <class W>
    using rebind_wait = dfc_queue<T, W, Trace>;
    // create, open, recover, recover(tid), next_seq, engine: containers::dfc_handle.

    // False if the node pool is exhausted (nothing was enqueued).
    bool enqueue(unsigned tid, const T& v) { return this->push_word(tid, enqueue_op, v); }
    std::optional<T> dequeue(unsigned tid) { return this->pop_word(tid, dequeue_op); }

    // Elements from the head (next to dequeue) to the tail.
    std::vector<T> unsynchronized_contents() const { return this->walk(true); }

private:
    explicit dfc_queue(engine_type e) : e_(std::move(e)) {}
    engine_type e_;
};

}  // namespace ferrite
