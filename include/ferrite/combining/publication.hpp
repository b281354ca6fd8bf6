// ferrite/combining/publication.hpp: a thread's announcement of one request to a combiner.
//
// Volatile (PFC's publication list lives in DRAM: only the combiner touches persistent
// memory). The owner writes `request`, then stores state = pending (release); the combiner
// reads it (acquire), computes `response` and stores state = done (release) only after the
// batch's effects are durable, so a thread that sees its result may return it.
#pragma once

#include <atomic>
#include <cstdint>

#include "ferrite/pmem/flow.hpp"

namespace ferrite::combining {

enum class pub_state : std::uint32_t { idle, pending, done };

// Padding between hot fields written by different threads. A fixed 64 rather than
// std::hardware_destructive_interference_size, whose value may change with compiler flags
// and would then change the layout of these types between translation units.
inline constexpr std::size_t line = 64;

// What the structure's combine() sees of one pending request.
template <class Request, class Response>
struct slot {
    Request request FERRITE_FLOW_SKIP;
    Response response FERRITE_FLOW_SKIP;  // volatile, as the whole list
};

template <class Request, class Response>
struct alignas(line) publication {
    std::atomic<pub_state> state{pub_state::idle};
    slot<Request, Response> op{};
};

}  // namespace ferrite::combining
