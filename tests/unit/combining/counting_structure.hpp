// A volatile combinable structure for the engine tests: fetch-and-add on a counter, where
// each request adds its amount and gets the counter's previous value. Every batch is
// recorded (size), so tests can see that combining really batches.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>

#include "ferrite/combining/structure.hpp"

namespace ferrite_test {

struct counting_structure {
    using request = std::uint64_t;   // amount to add
    using response = std::uint64_t;  // previous value
    std::uint64_t value = 0;
    std::uint64_t largest_batch = 0;
    bool inside = false;             // plain on purpose: TSan sees any concurrent combine
    bool overlap = false;

    void combine(std::span<ferrite::combining::slot<request, response>*> batch) noexcept {
        if (inside) overlap = true;
        inside = true;
        for (auto* s : batch) {
            s->response = value;
            value += s->request;
        }
        if (batch.size() > largest_batch) largest_batch = batch.size();
        // A pass that takes a little while (like a persistent one): others publish meanwhile.
        for (int i = 0; i < 200; ++i) __builtin_ia32_pause();
        inside = false;
    }
};

}  // namespace ferrite_test
