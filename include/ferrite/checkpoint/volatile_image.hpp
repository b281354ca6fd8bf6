// ferrite/checkpoint/volatile_image.hpp: the volatile image of CpNvm: its fixed-address
// mapping, and filling it from the persistent image, eagerly or on first touch.
//
// Paper: [NVM] ch. 4, section 4.3.5 (docs/references.md): after recovery the program runs on
// a volatile image loaded from the persistent one; "eager" recovery copies every page before
// the program goes on, "lazy" recovery protects the image and loads a page in a SIGSEGV
// handler when the program first touches it, so the time to the first completed operation
// does not grow with the image. docs/checkpointing.md, sections 1 and 8, fixes what the
// thesis leaves open; this class is that part and nothing else (no pool, no replay).
//
// Mapping: an anonymous private read-write mapping at exactly `base` (MAP_FIXED_NOREPLACE,
// never MAP_FIXED: a range that is taken fails with a pool_error naming what holds it, read
// from the process's own mapping list, and nothing is touched). The program's pointers into
// the image stay valid across restarts because the image is always mapped at `base`.
//
// Lazy loading, the algorithm:
//   arm:    the image becomes PROT_NONE; a per-page state byte (0 absent, 1 loading,
//           2 present) is mapped (anonymous: zero pages the kernel supplies on first
//           touch, so arming takes the same time whatever the image's size), and a staging reservoir (an anonymous mapping as large as
//           the image, never touched until a page is loaded through it); the image is
//           entered in a fixed table of armed images (16 slots, atomics) that a process-wide
//           SIGSEGV handler reads. The handler is installed once, with SA_SIGINFO, and keeps
//           the handler it replaced; it runs with every signal blocked.
//   fault:  the handler finds the armed image holding the faulting address. The thread that
//           moves the page's state 0 -> 1 (CAS) loads it: it copies the page from the
//           persistent image into the reservoir's page of the same index, moves that page
//           onto the image page with one mremap(MREMAP_MAYMOVE | MREMAP_FIXED), maps a
//           fresh page into the reservoir's hole, and stores state 2 (release). A thread that
//           finds the page loading spins (sched_yield) until it is present. Either returns,
//           and the faulting access runs again, now on the loaded page.
//   other:  a fault outside every armed image (or a SIGSEGV sent by kill) goes to the
//           handler that was installed before: its SA_SIGINFO function or plain function is
//           called; if it was the default (or ignore), the default is put back and the
//           access faults again (a sent signal is raised again), so the process dies of
//           SIGSEGV as it would have.
//
// What differs from [NVM]: the thesis "grants full access to other threads once the page is
// copied" but does not say how a protected page is filled while other threads may touch it
// (unprotecting it and copying in place would let them read a half-loaded page); here the
// page becomes accessible only when mremap installs it whole. The per-page state makes
// exactly one thread load each page (the thesis leaves concurrent first touches open). Faults outside the image
// reach the previous handler, and several images can be armed at once. The staging page is
// the reservoir's page of the same index rather than a fresh mapping so that installed pages
// are one mapping again: the kernel merges adjacent anonymous mappings only when they share
// their origin and are contiguous in it, and one fresh mapping per page would leave one
// kernel mapping per loaded page (measured: loading 4 KiB pages in random order, the
// default vm.max_map_count of 65530 is exhausted after about 160 MiB; with the reservoir a
// fully loaded image is one mapping, and a 508 MiB image loads in random order).
//
// Safety argument:
//   * No thread sees a half-copied page: until the mremap the image page is PROT_NONE, so
//     every access faults; mremap replaces the page table entry with the filled page in one
//     step, under the kernel's lock of the address space. The bytes were stored before the
//     system call in the loading thread, and a waiter reads them after its acquire load of
//     state 2, which the loader stored after the mremap returned.
//   * Exactly one load per page: only the 0 -> 1 CAS winner copies and moves; the reservoir
//     page of that index is used once, by it.
//   * The handler is async-signal-safe: it uses lock-free atomics (static_asserts), memcpy
//     (async-signal-safe since POSIX.1-2016), and system calls (mremap, mmap, madvise,
//     sched_yield, sigaction, write, abort); it allocates nothing, takes no lock, throws
//     nothing, and restores errno.
//   * The table is safe against a concurrent disarm: the handler counts itself into a slot's
//     users before it reads the slot's image, and the destructor empties the slot and then
//     waits for its users to leave before it unmaps and frees (seq_cst on both sides).
//   * The reservoir is unmapped only where it is still ours: a hole that could not be filled
//     again (another mapping took it meanwhile) is remembered in the page's state (3) and
//     skipped; nothing but our own mappings is ever unmapped or replaced.
//   If the kernel refuses a load (mremap fails: memory, or vm.max_map_count), the handler
//   writes a message to stderr and aborts: the access cannot be completed.
//
// Limits (of page protection, which [NVM] shares): a system call given a pointer into a page
// not loaded yet fails with EFAULT instead of loading it (touch the bytes first, e.g. before
// write(2) from the image); the program must not change the image's protection; the source
// must be ordinary readable memory (not another armed image); a SIGSEGV handler installed
// after the first arm_lazy must chain to the one it replaces, or lazy loading stops; the
// previous handler is called with every signal blocked, not with its own mask. While
// first touches are scattered the image is split into up to one mapping per loaded run:
// images of more than about 2 x vm.max_map_count pages loaded in random order can exhaust
// the count mid-way (load those eagerly, or raise vm.max_map_count).
#pragma once

#include <cstddef>
#include <cstdint>

namespace ferrite::checkpoint {

namespace detail {
struct lazy_pages;  // an armed image's state (src/checkpoint/volatile_image.cpp)
}

class volatile_image {
public:
    // Maps `bytes` (rounded up to the page size, > 0) read-write at exactly `base` (page
    // aligned, else usage_error), or where the kernel chooses when `base` is 0 (the caller
    // records base() and passes it after a restart). A range that is taken, even in part,
    // throws pool_error (pool_errc::io) naming the range and what lies there; so does any
    // other refusal of the kernel (errno in the message).
    static volatile_image map(std::uintptr_t base, std::uint64_t bytes);

    volatile_image() noexcept = default;  // maps nothing
    ~volatile_image();                    // disarms, unmaps
    volatile_image(volatile_image&& other) noexcept;
    volatile_image& operator=(volatile_image&& other) noexcept;
    volatile_image(const volatile_image&) = delete;
    volatile_image& operator=(const volatile_image&) = delete;

    // Copies size() bytes of `source` into the image, in page ranges over `threads` threads
    // (0: the hardware's; never more than one per page). usage_error while armed. For an
    // image as mapped (all zero) only: pages of `source` that are all zero are not written
    // (no page fault, no memory), so the time goes with the bytes in use, not the image's
    // size.
    void load_eager(const std::byte* source, unsigned threads);
    // Loads the image from `source` (size() bytes, which must stay readable and unchanged
    // while the image is armed) page by page on first touch (see above). usage_error if
    // already armed, or when 16 images are armed. The image stays armed until destroyed.
    void arm_lazy(const std::byte* source);
    // Pages loaded on first touch so far (0 when not armed).
    std::uint64_t pages_loaded() const noexcept;

    std::byte* data() const noexcept { return reinterpret_cast<std::byte*>(base_); }
    std::uint64_t size() const noexcept { return bytes_; }
    std::uintptr_t base() const noexcept { return base_; }

private:
    volatile_image(std::uintptr_t base, std::uint64_t bytes) noexcept : base_(base), bytes_(bytes) {}
    void release() noexcept;

    std::uintptr_t base_ = 0;
    std::uint64_t bytes_ = 0;
    detail::lazy_pages* lazy_ = nullptr;  // armed: owned, and entered in the handler's table
};

}  // namespace ferrite::checkpoint
