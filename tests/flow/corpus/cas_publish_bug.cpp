// Publish before durable through a compare-and-swap: the node is linked by the CAS before
// it is written back.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT bool push(node* head, node* fresh, std::uint64_t key) {
    node* expected = __atomic_load_n(&head->next, __ATOMIC_ACQUIRE);
    fresh->key = key;
    fresh->next = expected;
    const bool won = __atomic_compare_exchange_n(&head->next, &expected, fresh, false,  // flow-expect: durability
                                                 __ATOMIC_RELEASE, __ATOMIC_RELAXED);
    ferrite::pmem::pwb(fresh);
    ferrite::pmem::pwb(&head->next);
    ferrite::pmem::pfence();
    return won;
}
