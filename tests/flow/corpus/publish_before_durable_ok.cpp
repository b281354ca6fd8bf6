// Publish before durable, corrected: the node is durable before the link to it is written.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void push(node* head, node* fresh, std::uint64_t key) {
    fresh->key = key;
    fresh->next = head->next;
    ferrite::pmem::pwb(fresh);
    ferrite::pmem::pfence();  // the node before the link that publishes it
    head->next = fresh;
    ferrite::pmem::pwb(&head->next);
    ferrite::pmem::pfence();
}
