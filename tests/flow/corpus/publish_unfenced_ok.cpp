// Publish before durable (fence), corrected.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void push(node* head, node* fresh, std::uint64_t key) {
    fresh->key = key;
    fresh->next = head->next;
    ferrite::pmem::pwb(fresh);
    ferrite::pmem::pfence();
    head->next = fresh;
    ferrite::pmem::pwb(&head->next);
    ferrite::pmem::pfence();
}
