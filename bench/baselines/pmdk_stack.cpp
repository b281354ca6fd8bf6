// bench/baselines/pmdk_stack.cpp: `stack-pmdk`, a libpmemobj transactional linked stack.
//
// Persistent layout: the root object holds {top, size}; nodes {value, next} are allocated
// with pmemobj_tx_alloc (PMDK flushes a transactionally allocated node at commit). Each
// operation is one PMDK transaction under one std::mutex:
//   push_back  allocate a node, link it above top, undo-log and update {top, size}
//   pop_back   undo-log and update {top, size}, free the old top (freed at commit)
// The back of the vocabulary is the top of the stack; pop on an empty stack does nothing.
#include <cstddef>
#include <mutex>

#include "bench/baselines/baselines.hpp"
#include "bench/baselines/pmdk_pool.hpp"

namespace ferrite::bench {
namespace {

struct stack_root {
    PMEMoid top;
    std::uint64_t size;
};

struct stack_node {
    std::uint64_t value;
    PMEMoid next;
};

constexpr std::uint64_t node_type = 2;
constexpr std::uint64_t fill_batch = 256;  // nodes per transaction when filling

class pmdk_stack final : public subject {
public:
    explicit pmdk_stack(const subject_config& c)
        : pool_(c.pool_dir, "stack", pmdk::pool_size_for(c.initial_size, 64)),
          root_oid_(pool_.root(sizeof(stack_root))),
          root_(pmdk::direct<stack_root>(root_oid_)) {
        for (std::uint64_t done = 0; done < c.initial_size;) {
            pmdk::transaction t(pool_.get());
            for (std::uint64_t k = 0; k < fill_batch && done < c.initial_size; ++k, ++done) push(t, done);
            t.commit();
        }
    }

    void run(unsigned, op o, std::uint64_t a, std::uint64_t) override {
        std::lock_guard lock(mutex_);
        switch (o) {
        case op::push_back: {
            pmdk::transaction t(pool_.get());
            push(t, a);
            t.commit();
            break;
        }
        case op::pop_back: pop(); break;
        case op::push_front:
        case op::pop_front:
        case op::get:
        case op::swap: break;  // not supported (never issued: see kind().supports)
        }
    }

    bool persistence_counted() const override { return false; }

private:
    void push(pmdk::transaction& t, std::uint64_t v) {
        const PMEMoid n = t.alloc(sizeof(stack_node), node_type);
        auto* node = pmdk::direct<stack_node>(n);
        node->value = v;
        node->next = root_->top;
        t.add(root_oid_, 0, sizeof(stack_root));
        root_->top = n;
        ++root_->size;
    }

    void pop() {
        if (OID_IS_NULL(root_->top)) return;
        pmdk::transaction t(pool_.get());
        const PMEMoid old = root_->top;
        const auto* node = pmdk::direct<stack_node>(old);
        sink_ += node->value;
        t.add(root_oid_, 0, sizeof(stack_root));
        root_->top = node->next;
        --root_->size;
        t.free(old);
        t.commit();
    }

    pmdk::pool pool_;
    PMEMoid root_oid_;
    stack_root* root_;
    std::mutex mutex_;
    std::uint64_t sink_ = 0;  // keeps reads from being optimized away
};

}  // namespace

subject_kind pmdk_stack_kind() {
    return {"stack-pmdk",
            "PMDK libpmemobj transactional linked stack (push/pop at the top), one std::mutex",
            {op::push_back, op::pop_back},
            [](const subject_config& c) { return std::make_unique<pmdk_stack>(c); }};
}

}  // namespace ferrite::bench
