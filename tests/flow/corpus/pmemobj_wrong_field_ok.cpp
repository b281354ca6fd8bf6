// libpmemobj: pmemobj_persist of the field written.
#include <libpmemobj.h>

#include "record.hpp"

FERRITE_FLOW_ROOT void set(PMEMobjpool* pop, record* r, std::uint64_t v) {
    r->tail = v;
    pmemobj_persist(pop, &r->tail, sizeof r->tail);
}
