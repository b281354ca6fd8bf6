// Publish before durable, the fence forgotten: the node is written back, but nothing orders
// the write-back before the publishing store.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void push(node* head, node* fresh, std::uint64_t key) {
    fresh->key = key;
    fresh->next = head->next;
    ferrite::pmem::pwb(fresh);
    head->next = fresh;  // flow-expect: durability
    ferrite::pmem::pwb(&head->next);
    ferrite::pmem::pfence();
}
