// tests/flow/corpus/record.hpp: the persistent types the corpus programs share.
// Two-line records, so that a write-back of the wrong line is a different line.
#pragma once

#include <cstdint>

#include "ferrite/pmem/flow.hpp"

struct alignas(64) record {
    std::uint64_t data;                       // line 0
    std::uint64_t more;                       // line 0
    alignas(64) std::uint64_t tail;           // line 1
};

struct alignas(64) entry {
    std::uint64_t data;                                     // line 0
    alignas(64) std::uint64_t valid FERRITE_FLOW_SENTINEL;  // line 1
};

struct alignas(64) node {
    std::uint64_t key;
    node* next;
};

struct alignas(64) header {
    node* first FERRITE_FLOW_DURABLE;
    std::uint64_t hits FERRITE_FLOW_SKIP;  // volatile statistics beside the persistent field
};

// An undo log's control line: the tag arms the log (its entries name the words to restore).
struct alignas(64) undo_control {
    std::uint64_t tag FERRITE_FLOW_SENTINEL FERRITE_FLOW_LOG;
};
