// A root that refuses bad input with an exception it catches (its fields stored in the exception
// object: DRAM) and, on good input, stores the record without writing it back.
#include <exception>

#include "ferrite/pmem/primitives.hpp"
#include "record.hpp"

struct refused : std::exception {
    std::uint64_t value;
    explicit refused(std::uint64_t v) : value(v) {}
};

FERRITE_FLOW_ROOT bool set(record* r, std::uint64_t v) noexcept {
    try {
        if (v > 1000) throw refused(v);
    } catch (const refused&) {
        return false;  // the exception object was written; the record was not
    }
    r->data = v;  // flow-expect: durability
    ferrite::pmem::pfence();
    return true;
}
