// A root that refuses bad input with an exception it catches (its fields stored in the exception
// object: DRAM, not persistent) and, on good input, persists the record.
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
    r->data = v;
    ferrite::pmem::pwb(&r->data);
    ferrite::pmem::pfence();
    return true;
}
