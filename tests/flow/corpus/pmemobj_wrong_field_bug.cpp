// libpmemobj: pmemobj_persist of the field next to the one written (another line).
#include <libpmemobj.h>

#include "record.hpp"

FERRITE_FLOW_ROOT void set(PMEMobjpool* pop, record* r, std::uint64_t v) {
    r->tail = v;  // flow-expect: durability
    pmemobj_persist(pop, &r->data, sizeof r->data);
}
