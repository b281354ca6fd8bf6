// A durable field outside an analysis root: the link is stored and never written back.
// The statistics beside it are volatile (FERRITE_FLOW_SKIP) and need nothing.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

void link(header* h, node* n) {
    h->first = n;  // flow-expect: durability
    h->hits = h->hits + 1;
}
