// Non-temporal store without a fence, corrected (no write-back needed).
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t v) {
    ferrite::pmem::nt_store(&r->data, v);
    ferrite::pmem::pfence();
}
