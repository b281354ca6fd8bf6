// bench/baselines/pmdk_queue.cpp: `queue-pmdk`, a libpmemobj transactional linked queue.
//
// Persistent layout: the root object holds {head, tail, size}; nodes {value, next} are
// allocated with pmemobj_tx_alloc (flushed by PMDK at commit). Each operation is one PMDK
// transaction under one std::mutex:
//   push_back  allocate a node; undo-log and set the old tail's next (if any), then
//              undo-log and update {head, tail, size}
//   pop_front  undo-log and update {head, tail, size}, free the old head (freed at commit)
// pop_front on an empty queue does nothing.
#include <cstddef>

#include "bench/baselines/baselines.hpp"
#include "bench/baselines/pmdk_linked.hpp"

namespace ferrite::bench {
namespace {

struct queue_root {
    PMEMoid head;
    PMEMoid tail;
    std::uint64_t size;
};

struct queue_node {
    std::uint64_t value;
    PMEMoid next;
};

constexpr std::uint64_t node_type = 3;
class pmdk_queue final : public pmdk_linked_subject<pmdk_queue, queue_root, op::pop_front> {
public:
    explicit pmdk_queue(const subject_config& c) : pmdk_linked_subject(c, "queue") { fill(c.initial_size); }

    void push(pmdk::transaction& t, std::uint64_t v) {
        const PMEMoid n = t.alloc(sizeof(queue_node), node_type);
        auto* node = pmdk::direct<queue_node>(n);
        node->value = v;
        node->next = OID_NULL;
        if (!OID_IS_NULL(root_->tail)) {
            t.add(root_->tail, offsetof(queue_node, next), sizeof(PMEMoid));
            pmdk::direct<queue_node>(root_->tail)->next = n;
        }
        t.add(root_oid_, 0, sizeof(queue_root));
        if (OID_IS_NULL(root_->head)) root_->head = n;
        root_->tail = n;
        ++root_->size;
    }

    bool empty() const { return OID_IS_NULL(root_->head); }

    std::uint64_t pop(pmdk::transaction& t) {
        const PMEMoid old = root_->head;
        const auto* node = pmdk::direct<queue_node>(old);
        const auto value = node->value;
        t.add(root_oid_, 0, sizeof(queue_root));
        root_->head = node->next;
        if (OID_IS_NULL(root_->head)) root_->tail = OID_NULL;
        --root_->size;
        t.free(old);
        return value;
    }
};

}  // namespace

subject_kind pmdk_queue_kind() {
    return {"queue-pmdk",
            "PMDK libpmemobj transactional linked queue (push_back, pop_front), one std::mutex",
            {op::push_back, op::pop_front},
            [](const subject_config& c) { return std::make_unique<pmdk_queue>(c); }};
}

}  // namespace ferrite::bench
