// A durable field outside an analysis root, corrected.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

void link(header* h, node* n) {
    h->first = n;
    h->hits = h->hits + 1;
    ferrite::pmem::pwb(&h->first);
    ferrite::pmem::pfence();
}
