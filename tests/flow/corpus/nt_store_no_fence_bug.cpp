// Non-temporal store without a fence: it bypasses the cache but is durable only after one.
#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

FERRITE_FLOW_ROOT void set(record* r, std::uint64_t v) {
    ferrite::pmem::nt_store(&r->data, v);  // flow-expect: durability
}
