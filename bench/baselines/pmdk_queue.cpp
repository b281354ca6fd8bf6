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
#include <mutex>

#include "bench/baselines/baselines.hpp"
#include "bench/baselines/pmdk_pool.hpp"

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
constexpr std::uint64_t fill_batch = 256;  // nodes per transaction when filling

class pmdk_queue final : public subject {
public:
    explicit pmdk_queue(const subject_config& c)
        : pool_(c.pool_dir, "queue", pmdk::pool_size_for(c.initial_size, 64)),
          root_oid_(pool_.root(sizeof(queue_root))),
          root_(pmdk::direct<queue_root>(root_oid_)) {
        for (std::uint64_t done = 0; done < c.initial_size;) {
            pmdk::transaction t(pool_.get());
            for (std::uint64_t k = 0; k < fill_batch && done < c.initial_size; ++k, ++done)
                push_back(t, done);
            t.commit();
        }
    }

    void run(unsigned, op o, std::uint64_t a, std::uint64_t) override {
        std::lock_guard lock(mutex_);
        switch (o) {
        case op::push_back: {
            pmdk::transaction t(pool_.get());
            push_back(t, a);
            t.commit();
            break;
        }
        case op::pop_front: pop_front(); break;
        case op::pop_back:
        case op::push_front:
        case op::get:
        case op::swap: break;  // not supported (never issued: see kind().supports)
        }
    }

    bool persistence_counted() const override { return false; }

private:
    void push_back(pmdk::transaction& t, std::uint64_t v) {
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

    void pop_front() {
        if (OID_IS_NULL(root_->head)) return;
        pmdk::transaction t(pool_.get());
        const PMEMoid old = root_->head;
        const auto* node = pmdk::direct<queue_node>(old);
        sink_ += node->value;
        t.add(root_oid_, 0, sizeof(queue_root));
        root_->head = node->next;
        if (OID_IS_NULL(root_->head)) root_->tail = OID_NULL;
        --root_->size;
        t.free(old);
        t.commit();
    }

    pmdk::pool pool_;
    PMEMoid root_oid_;
    queue_root* root_;
    std::mutex mutex_;
    std::uint64_t sink_ = 0;  // keeps reads from being optimized away
};

}  // namespace

subject_kind pmdk_queue_kind() {
    return {"queue-pmdk",
            "PMDK libpmemobj transactional linked queue (push_back, pop_front), one std::mutex",
            {op::push_back, op::pop_front},
            [](const subject_config& c) { return std::make_unique<pmdk_queue>(c); }};
}

}  // namespace ferrite::bench
