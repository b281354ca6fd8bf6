// Inter-procedural publish before durable, corrected: a helper persists the node first.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

static void init(node* n, std::uint64_t key, node* next) {
    n->key = key;
    n->next = next;
}

static void persist(const node* n) {
    ferrite::pmem::pwb(n);
    ferrite::pmem::pfence();
}

FERRITE_FLOW_ROOT void push(node* head, node* fresh, std::uint64_t key) {
    init(fresh, key, head->next);
    persist(fresh);
    head->next = fresh;
    ferrite::pmem::pwb(&head->next);
    ferrite::pmem::pfence();
}
