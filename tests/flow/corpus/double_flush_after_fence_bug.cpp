// Double flush across a fence: the line was written back and fenced; nothing wrote it since.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t v) {
    r->data = v;
    ferrite::pmem::pwb(&r->data);
    ferrite::pmem::pfence();
    ferrite::pmem::pwb(&r->data);  // flow-expect: double-flush
    ferrite::pmem::pfence();
}
