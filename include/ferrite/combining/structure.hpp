// ferrite/combining/structure.hpp: what a sequential structure gives a combining engine
// (what the engines report about it: stats.hpp).
//
// The engine owns the order of a combining pass (docs/design.md): collect the pending requests,
// hand them to the structure's combine(), then publish the responses. The structure's
// combine(batch) eliminates what it can (a push meeting a pop never touches memory),
// applies the rest, writes the batch's effects back and fences ONCE, and returns: so every
// structure gets "durable before published" right by construction, and every structure's
// pwb/pfence trace has the same shape (pwbs, one pfence pair per batch).
//
//   struct my_structure {
//       using request = ...;  using response = ...;           // trivially copyable
//       void combine(std::span<slot<request, response>*> batch) noexcept;
//   };
#pragma once

#include <concepts>
#include <span>

#include "ferrite/combining/publication.hpp"

namespace ferrite::combining {

template <class S>
concept combinable = requires(S& s, std::span<slot<typename S::request, typename S::response>*> batch) {
    { s.combine(batch) } noexcept;
};

}  // namespace ferrite::combining
