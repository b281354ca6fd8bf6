// Inter-procedural publish before durable: the node is initialised by a helper and linked
// before anything writes it back.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

static void init(node* n, std::uint64_t key, node* next) {
    n->key = key;
    n->next = next;
}

FERRITE_FLOW_ROOT void push(node* head, node* fresh, std::uint64_t key) {
    init(fresh, key, head->next);
    head->next = fresh;  // flow-expect: durability
    ferrite::pmem::pwb(fresh);
    ferrite::pmem::pwb(&head->next);
    ferrite::pmem::pfence();
}
