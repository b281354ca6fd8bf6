// ferrite/sync/futex.hpp: the two Linux futex operations ferrite's waiting uses.
//
// Volatile only (this layer never touches persistent memory). futex_wait sleeps while
// *word == expected (it may return spuriously: callers re-check in a loop); futex_wake
// wakes up to n sleepers on the word. Process-private futexes: pools are used by one
// process at a time.
#pragma once

#include <atomic>
#include <cstdint>

namespace ferrite::sync {

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) noexcept;
void futex_wake(std::atomic<std::uint32_t>& word, int n) noexcept;
inline void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept { futex_wake(word, 1 << 30); }

}  // namespace ferrite::sync
