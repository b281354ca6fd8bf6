// Publish before durable: the new node is linked before its contents are written back and
// fenced; a crash can leave a durable link to a node with a garbage key.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void push(node* head, node* fresh, std::uint64_t key) {
    fresh->key = key;
    fresh->next = head->next;
    head->next = fresh;  // flow-expect: durability
    ferrite::pmem::pwb(fresh);
    ferrite::pmem::pwb(&head->next);
    ferrite::pmem::pfence();
}
