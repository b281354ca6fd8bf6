// bench/baselines/pmdk_stack.cpp: `stack-pmdk`, a libpmemobj transactional linked stack.
//
// Persistent layout: the root object holds {top, size}; nodes {value, next} are allocated
// with pmemobj_tx_alloc (PMDK flushes a transactionally allocated node at commit). Each
// operation is one PMDK transaction under one std::mutex:
//   push_back  allocate a node, link it above top, undo-log and update {top, size}
//   pop_back   undo-log and update {top, size}, free the old top (freed at commit)
// The back of the vocabulary is the top of the stack; pop on an empty stack does nothing.
#include <cstddef>

#include "bench/baselines/baselines.hpp"
#include "bench/baselines/pmdk_linked.hpp"

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
class pmdk_stack final : public pmdk_linked_subject<pmdk_stack, stack_root, op::pop_back> {
public:
    explicit pmdk_stack(const subject_config& c) : pmdk_linked_subject(c, "stack") { fill(c.initial_size); }

    void push(pmdk::transaction& t, std::uint64_t v) {
        const PMEMoid n = t.alloc(sizeof(stack_node), node_type);
        auto* node = pmdk::direct<stack_node>(n);
        node->value = v;
        node->next = root_->top;
        t.add(root_oid_, 0, sizeof(stack_root));
        root_->top = n;
        ++root_->size;
    }

    bool empty() const { return OID_IS_NULL(root_->top); }

    std::uint64_t pop(pmdk::transaction& t) {
        const PMEMoid old = root_->top;
        const auto* node = pmdk::direct<stack_node>(old);
        const auto value = node->value;
        t.add(root_oid_, 0, sizeof(stack_root));
        root_->top = node->next;
        --root_->size;
        t.free(old);
        return value;
    }
};

}  // namespace

subject_kind pmdk_stack_kind() {
    return {"stack-pmdk",
            "PMDK libpmemobj transactional linked stack (push/pop at the top), one std::mutex",
            {op::push_back, op::pop_back},
            [](const subject_config& c) { return std::make_unique<pmdk_stack>(c); }};
}

}  // namespace ferrite::bench
