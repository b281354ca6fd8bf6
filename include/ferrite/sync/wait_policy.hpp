// ferrite/sync/wait_policy.hpp: how a thread waits for a condition another thread makes true.
//
// Policies are types (libcds style), chosen per combining engine as a template parameter:
//
//   spin_then_futex<SpinCount>  spin SpinCount iterations (a pause each), then sleep on a
//                               futex word until woken (PFC thesis, Alg 5.5: the waiting that
//                               keeps combining fast when threads outnumber cores)
//   pure_spin                   spin (with a pause) forever: the "no-futex" ablation
//   not_sticky<P>               P, but a waiter takes a free combiner lock at once instead of
//                               leaving it to the thread that combined last
//                               (combining/sticky_combiner.hpp): the "no-sticky" ablation
//
// The waiting itself is implemented where the word is (futex_lock.hpp). Every spin iteration
// calls pmem::wait_hint(), which under the crash simulator hands control to another thread;
// there nothing sleeps on a futex either.
#pragma once

#include <cstdint>


namespace ferrite::sync {

// States of a futex word used for waiting (the combining lock uses the same three).
inline constexpr std::uint32_t word_free = 0;
inline constexpr std::uint32_t word_taken = 1;
inline constexpr std::uint32_t word_contended = 2;

struct pure_spin {
    static constexpr bool uses_futex = false;
    static constexpr bool sticky = true;
};

template <unsigned SpinCount = 1024>
struct spin_then_futex {
    static constexpr bool uses_futex = true;
    static constexpr unsigned spin_count = SpinCount;
    static constexpr bool sticky = true;
};

template <class Policy>
struct not_sticky : Policy {
    static constexpr bool sticky = false;
};

}  // namespace ferrite::sync
