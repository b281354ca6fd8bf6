// ferrite/combining/structure.hpp: what a sequential structure gives a combining engine, and
// the statistics policies.
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

#include <atomic>
#include <concepts>
#include <cstdint>
#include <span>

#include "ferrite/combining/publication.hpp"

namespace ferrite::combining {

template <class S>
concept combinable = requires(S& s, std::span<slot<typename S::request, typename S::response>*> batch) {
    { s.combine(batch) } noexcept;
};

// Statistics policies: the combiner reports each pass's batch size.
struct no_stats {
    void on_pass(std::size_t) noexcept {}
    double mean_batch_size() const noexcept { return 0; }
};

struct batch_stats {
    void on_pass(std::size_t n) noexcept {  // combiner only (holds the lock): relaxed is enough
        passes_.store(passes_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        ops_.store(ops_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
    double mean_batch_size() const noexcept {
        const auto p = passes_.load(std::memory_order_relaxed);
        return p ? static_cast<double>(ops_.load(std::memory_order_relaxed)) / static_cast<double>(p) : 0;
    }
    std::uint64_t passes() const noexcept { return passes_.load(std::memory_order_relaxed); }

private:
    std::atomic<std::uint64_t> passes_{0}, ops_{0};
};

}  // namespace ferrite::combining
