// ferrite/pmem/observer.hpp: the hook through which the crash simulator sees persistence.
//
// While an observer is installed, every primitive (pwb, pwb_range, pfence, psync, nt_store,
// nt_memcpy) calls it *instead of* emitting instructions, passing the source location of the
// call site. The simulator (ferrite/sim) uses this to keep its shadow media image and to give
// every call site an id for flush mutation testing. This header is the only coupling between
// the pmem layer and the simulator above it: pmem knows nothing about crash images.
//
// Contract: on_pwb is called once per 64-byte line, with the line's address (aligned down);
// on_nt_store is called after the non-temporal bytes have been stored (with normal stores).
#pragma once

#include <cstddef>
#include <source_location>

namespace ferrite::pmem {

using site = std::source_location;

class persistence_observer {
public:
    virtual ~persistence_observer() = default;
    virtual void on_pwb(const void* line, const site& where) noexcept = 0;
    virtual void on_pfence(const site& where) noexcept = 0;
    virtual void on_psync(const site& where) noexcept = 0;
    virtual void on_nt_store(void* dst, std::size_t bytes, const site& where) noexcept = 0;
    // A thread is waiting for another (a spin loop's iteration, see wait_hint()). The crash
    // simulator's deterministic scheduler passes its token here; others may ignore it.
    virtual void on_wait(const site& where) noexcept { (void)where; }
};

// Install (or, with nullptr, remove) the process-wide observer. Returns the previous one.
// Install before the threads under observation start; remove after they have joined.
persistence_observer* install_observer(persistence_observer*) noexcept;
persistence_observer* installed_observer() noexcept;

}  // namespace ferrite::pmem
