// The volatile image of CpNvm: its mapping, eager loading, and lazy loading on first touch
// (see ferrite/checkpoint/volatile_image.hpp for the algorithm and its safety argument).
#include "ferrite/checkpoint/volatile_image.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "ferrite/error.hpp"

namespace ferrite::checkpoint {

namespace detail {

// An armed image. Written by arm_lazy before it is entered in the table; afterwards only
// `state` and `loaded` change (atomics), until the destructor took it out of the table and
// waited for the handlers that were using it.
struct lazy_pages {
    std::uintptr_t begin = 0, end = 0;  // the image
    std::uint64_t page = 0;
    const std::byte* source = nullptr;  // the persistent image, end - begin bytes
    std::byte* reservoir = nullptr;     // staging pages: page i is used once, to load page i
    // Per page, see below: one byte each, used through std::atomic_ref. An anonymous mapping,
    // not a zeroed array: the kernel supplies zero pages on first touch, so arming does not
    // write a byte per page (it would grow with the image: 0.5 MiB for 2 GiB).
    std::uint8_t* state = nullptr;
    std::size_t state_bytes = 0;
    std::atomic<std::uint64_t> loaded{0};
    std::atomic_ref<std::uint8_t> state_of(std::uint64_t i) const noexcept { return std::atomic_ref<std::uint8_t>(state[i]); }
    lazy_pages() = default;
    lazy_pages(const lazy_pages&) = delete;
    lazy_pages& operator=(const lazy_pages&) = delete;
    ~lazy_pages() {
        if (state != nullptr) ::munmap(state, state_bytes);
    }
    unsigned slot = 0;
};

}  // namespace detail

namespace {

using detail::lazy_pages;

// A page's state. `present_hole`: loaded, but the reservoir's page could not be mapped again
// (another mapping took the hole): the destructor must not unmap there.
constexpr std::uint8_t absent = 0, loading = 1, present = 2, present_hole = 3;
constexpr unsigned max_armed = 16;

// The handler may only use atomics that need no lock.
static_assert(std::atomic<std::uint8_t>::is_always_lock_free);
static_assert(std::atomic_ref<std::uint8_t>::is_always_lock_free);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic<lazy_pages*>::is_always_lock_free);

void* const map_failed = MAP_FAILED;

// The table of armed images the handler reads. A handler counts itself into `users` before
// it reads `image`; the destructor empties `image`, then waits for `users` to reach 0.
struct armed_slot {
    std::atomic<lazy_pages*> image{nullptr};
    std::atomic<std::uint32_t> users{0};
};
armed_slot armed[max_armed];  // constant-initialised: usable before main and after exit

// The SIGSEGV disposition our handler replaced: written once, before ours is installed.
struct sigaction previous_action {};

std::uint64_t page_size() noexcept {
    static const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    return page;
}

// --- async-signal-safe output for the handler's fatal path ------------------------------

void write_text(const char* text) noexcept {
    std::size_t n = std::strlen(text);
    while (n > 0) {
        const ssize_t w = ::write(STDERR_FILENO, text, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        text += w;
        n -= static_cast<std::size_t>(w);
    }
}

void write_number(std::uint64_t v, unsigned radix) noexcept {
    char buffer[24];
    char* p = buffer + sizeof buffer;
    *--p = '\0';
    do {
        const auto digit = static_cast<char>(v % radix);
        *--p = static_cast<char>(digit < 10 ? '0' + digit : 'a' + digit - 10);
        v /= radix;
    } while (v != 0);
    if (radix == 16) {
        *--p = 'x';
        *--p = '0';
    }
    write_text(p);
}

[[noreturn]] void fail_load(const char* call, std::uintptr_t page, int err) noexcept {
    write_text("ferrite: volatile_image: cannot load the page at ");
    write_number(page, 16);
    write_text(" on first touch: ");
    write_text(call);
    write_text(" failed with errno ");
    write_number(static_cast<std::uint64_t>(err), 10);
    write_text(err == ENOMEM ? " (out of memory, or vm.max_map_count reached: load the image eagerly, or raise it)\n"
                             : "\n");
    std::abort();
}

// --- the handler ---------------------------------------------------------------------------

// Loads the page of `s` that holds `address` (see the header), or waits until another
// thread has. On return the page is present.
void load_page(lazy_pages& s, std::uintptr_t address) noexcept {
    const std::uint64_t i = (address - s.begin) / s.page;
    const auto state = s.state_of(i);
    std::uint8_t expected = absent;
    if (!state.compare_exchange_strong(expected, loading, std::memory_order_acquire)) {
        while (state.load(std::memory_order_acquire) == loading) ::sched_yield();
        return;
    }
    std::byte* staging = s.reservoir + i * s.page;
    const std::uintptr_t target = s.begin + i * s.page;
    std::memcpy(staging, s.source + i * s.page, s.page);
    if (::mremap(staging, s.page, s.page, MREMAP_MAYMOVE | MREMAP_FIXED, reinterpret_cast<void*>(target)) ==
        map_failed)
        fail_load("mremap", target, errno);
    // Fill the reservoir's hole again with a mapping like the reservoir, so that it stays one
    // mapping (and a later unmap of it covers only what is ours). NOREPLACE: if another
    // mapping took the hole meanwhile, it stays, and the hole is remembered.
    std::uint8_t done = present;
    void* refill = ::mmap(staging, s.page, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (refill == staging) {
        (void)::madvise(staging, s.page, MADV_NOHUGEPAGE);  // as the reservoir: the same flags
    } else {
        if (refill != map_failed) ::munmap(refill, s.page);  // a kernel that took the address as a hint
        done = present_hole;
    }
    s.loaded.fetch_add(1, std::memory_order_relaxed);
    state.store(done, std::memory_order_release);
}

// Hands a signal that is not a first touch to the disposition our handler replaced.
void chain(int sig, siginfo_t* info, void* context) noexcept {
    const struct sigaction& previous = previous_action;
    if ((previous.sa_flags & SA_SIGINFO) != 0) {
        previous.sa_sigaction(sig, info, context);
        return;
    }
    const bool sent = info == nullptr || info->si_code <= 0;  // by kill(2) or raise(3), not a fault
    if (previous.sa_handler == SIG_IGN && sent) return;
    if (previous.sa_handler == SIG_DFL || previous.sa_handler == SIG_IGN) {
        // Put the default back: a fault happens again when the access is retried, a sent
        // signal is raised again (blocked until this handler returns): the process dies of it.
        struct sigaction default_action {};
        default_action.sa_handler = SIG_DFL;
        sigemptyset(&default_action.sa_mask);
        ::sigaction(sig, &default_action, nullptr);
        if (sent) ::raise(sig);
        return;
    }
    previous.sa_handler(sig);
}

void on_segv(int sig, siginfo_t* info, void* context) {
    const int saved_errno = errno;
    if (info != nullptr && info->si_code > 0) {  // a fault, with its address
        const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
        for (armed_slot& slot : armed) {
            if (slot.image.load(std::memory_order_acquire) == nullptr) continue;
            slot.users.fetch_add(1, std::memory_order_seq_cst);
            lazy_pages* s = slot.image.load(std::memory_order_seq_cst);
            const bool ours = s != nullptr && address >= s->begin && address < s->end;
            if (ours) load_page(*s, address);
            slot.users.fetch_sub(1, std::memory_order_release);
            if (ours) {
                errno = saved_errno;
                return;  // the access runs again
            }
        }
    }
    errno = saved_errno;
    chain(sig, info, context);
}

void install_handler() {
    static std::mutex mutex;
    static bool installed = false;
    const std::lock_guard lock(mutex);
    if (installed) return;
    struct sigaction ours {};
    ours.sa_sigaction = on_segv;
    // On the alternate stack where the program set one (a stack overflow reaches the previous
    // handler); every signal blocked while it runs, so that no other handler interrupts a load
    // and then touches the page being loaded (it would wait for itself).
    ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigfillset(&ours.sa_mask);
    // Read the previous disposition first, so that it is complete before ours can run.
    if (::sigaction(SIGSEGV, nullptr, &previous_action) != 0 || ::sigaction(SIGSEGV, &ours, nullptr) != 0)
        throw pool_error(pool_errc::io, std::string("volatile image: cannot install the SIGSEGV handler of lazy loading: ") +
                                            std::strerror(errno));
    installed = true;
}

// --- messages ------------------------------------------------------------------------------

std::string hex(std::uintptr_t v) {
    static constexpr char digits[] = "0123456789abcdef";
    char buffer[2 + 2 * sizeof v];
    char* p = buffer + sizeof buffer;
    do {
        *--p = digits[v % 16];
        v /= 16;
    } while (v != 0);
    *--p = 'x';
    *--p = '0';
    return std::string(p, buffer + sizeof buffer);
}

std::string range_text(std::uintptr_t base, std::uint64_t bytes) {
    std::string out = "[";  // appended, not "[" + ...: GCC 12 warns (-Wrestrict) on that
    out.append(hex(base)).append(", ").append(hex(base + bytes)).append(") (");
    return out.append(std::to_string(bytes)).append(" bytes)");
}

// The mappings of this process that overlap [begin, end), from its mapping list.
std::string mappings_in(std::uintptr_t begin, std::uintptr_t end) {
    std::ifstream maps("/proc/self/maps");
    std::string line, out;
    unsigned found = 0;
    while (std::getline(maps, line)) {
        // "start-end perms offset dev inode   path"
        char* p = nullptr;
        const std::uintptr_t start = std::strtoull(line.c_str(), &p, 16);
        if (p == nullptr || *p != '-') continue;
        const std::uintptr_t stop = std::strtoull(p + 1, &p, 16);
        if (start >= end || stop <= begin) continue;
        if (++found > 4) continue;
        std::string perms, offset, device, inode, path;
        const auto rest = line.substr(static_cast<std::size_t>(p - line.c_str()));
        std::size_t at = 0;
        for (std::string* field : {&perms, &offset, &device, &inode}) {
            at = rest.find_first_not_of(' ', at);
            const auto next = rest.find(' ', at);
            *field = rest.substr(at, next - at);
            at = next;
        }
        if (at != std::string::npos && (at = rest.find_first_not_of(' ', at)) != std::string::npos)
            path = rest.substr(at);
        out += (found > 1 ? "; " : "") + std::string("[") + hex(start) + "-" + hex(stop) + "] " + perms + " " +
               (path.empty() ? std::string("anonymous memory") : printable(path));
    }
    if (found > 4) out += "; and " + std::to_string(found - 4) + " more";
    return out;
}

[[noreturn]] void throw_taken(std::uintptr_t base, std::uint64_t bytes) {
    const std::string holders = mappings_in(base, base + bytes);
    throw pool_error(pool_errc::io,
                     "volatile image: the range " + range_text(base, bytes) + " it needs is taken: " +
                         (holders.empty() ? std::string("by a mapping that is gone now (try again)")
                                          : "it overlaps " + holders) +
                         "; restart the program (address space layout randomisation may have put a library, "
                         "a thread stack or the heap there) or create the image at another base");
}

}  // namespace

// --- volatile_image ------------------------------------------------------------------------

volatile_image volatile_image::map(std::uintptr_t base, std::uint64_t bytes) {
    const std::uint64_t page = page_size();
    if (bytes == 0) throw usage_error("volatile_image::map: the image must have at least one byte");
    if (base % page != 0)
        throw usage_error("volatile_image::map: the base " + hex(base) + " is not a multiple of the page size (" +
                          std::to_string(page) + ")");
    if (bytes > std::numeric_limits<std::uintptr_t>::max() - page)
        throw usage_error("volatile_image::map: " + std::to_string(bytes) + " bytes do not fit in the address space");
    const std::uint64_t rounded = (bytes + page - 1) / page * page;
    if (base != 0 && rounded > std::numeric_limits<std::uintptr_t>::max() - base)
        throw usage_error("volatile_image::map: " + range_text(base, rounded) + " wraps around the address space");
    int flags = MAP_PRIVATE | MAP_ANONYMOUS;
    if (base != 0) flags |= MAP_FIXED_NOREPLACE;  // never MAP_FIXED: it would replace what is there
    void* p = ::mmap(reinterpret_cast<void*>(base), rounded, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (p == map_failed) {
        const int err = errno;
        if (err == EEXIST) throw_taken(base, rounded);
        throw pool_error(pool_errc::io, "volatile image: cannot map " +
                                            (base != 0 ? range_text(base, rounded) : std::to_string(rounded) + " bytes") +
                                            ": " + std::strerror(err));
    }
    if (base != 0 && reinterpret_cast<std::uintptr_t>(p) != base) {
        // A kernel before Linux 4.17 does not know MAP_FIXED_NOREPLACE and takes the address
        // as a hint: it put the mapping elsewhere because the range is taken.
        ::munmap(p, rounded);
        throw_taken(base, rounded);
    }
    return volatile_image(reinterpret_cast<std::uintptr_t>(p), rounded);
}

volatile_image::~volatile_image() { release(); }

volatile_image::volatile_image(volatile_image&& other) noexcept
    : base_(std::exchange(other.base_, 0)), bytes_(std::exchange(other.bytes_, 0)),
      lazy_(std::exchange(other.lazy_, nullptr)) {}

volatile_image& volatile_image::operator=(volatile_image&& other) noexcept {
    if (this != &other) {
        release();
        base_ = std::exchange(other.base_, 0);
        bytes_ = std::exchange(other.bytes_, 0);
        lazy_ = std::exchange(other.lazy_, nullptr);
    }
    return *this;
}

void volatile_image::release() noexcept {
    if (lazy_ != nullptr) {
        armed_slot& slot = armed[lazy_->slot];
        slot.image.store(nullptr, std::memory_order_seq_cst);
        while (slot.users.load(std::memory_order_seq_cst) != 0) ::sched_yield();
        // Unmap the reservoir in runs, skipping the holes another mapping may hold.
        const std::uint64_t pages = bytes_ / lazy_->page;
        for (std::uint64_t i = 0; i < pages;) {
            if (lazy_->state_of(i).load(std::memory_order_relaxed) == present_hole) {
                ++i;
                continue;
            }
            std::uint64_t j = i + 1;
            while (j < pages && lazy_->state_of(j).load(std::memory_order_relaxed) != present_hole) ++j;
            ::munmap(lazy_->reservoir + i * lazy_->page, (j - i) * lazy_->page);
            i = j;
        }
        delete lazy_;
        lazy_ = nullptr;
    }
    if (base_ != 0) ::munmap(data(), bytes_);
    base_ = 0;
    bytes_ = 0;
}

void volatile_image::load_eager(const std::byte* source, unsigned threads) {
    if (base_ == 0) throw usage_error("volatile_image::load_eager: no image is mapped");
    if (lazy_ != nullptr) throw usage_error("volatile_image::load_eager: the image is armed for lazy loading");
    if (source == nullptr) throw usage_error("volatile_image::load_eager: no source");
    const std::uint64_t page = page_size();
    const std::uint64_t pages = bytes_ / page;
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    const std::uint64_t n = std::min<std::uint64_t>(threads, pages);
    std::byte* image = data();
    // Runs of pages that hold a non-zero byte are copied; a page of zeros is left alone: the
    // image's page is zero already (the mapping is fresh), and not writing it spares its
    // page fault and its memory (an image is mostly zero beyond what its program allocated).
    const auto zero_page = [page](const std::byte* p) {
        std::uint64_t any = 0;
        for (std::uint64_t i = 0; i < page; i += 64) {
            std::uint64_t w[8];
            std::memcpy(w, p + i, 64);
            for (const auto x : w) any |= x;
            if (any != 0) return false;
        }
        return true;
    };
    const auto copy = [=](std::uint64_t t) {
        const std::uint64_t first = pages * t / n, last = pages * (t + 1) / n;
        for (std::uint64_t i = first; i < last;) {
            if (zero_page(source + i * page)) {
                ++i;
                continue;
            }
            std::uint64_t j = i + 1;
            while (j < last && !zero_page(source + j * page)) ++j;
            std::memcpy(image + i * page, source + i * page, (j - i) * page);
            i = j;
        }
    };
    std::vector<std::thread> workers;
    workers.reserve(n - 1);
    std::uint64_t t = 1;
    try {
        for (; t < n; ++t) workers.emplace_back(copy, t);
    } catch (const std::system_error&) {
        // No more threads to be had: this thread copies the ranges that have none.
    }
    for (std::uint64_t u = t; u < n; ++u) copy(u);
    copy(0);
    for (std::thread& w : workers) w.join();
}

void volatile_image::arm_lazy(const std::byte* source) {
    if (base_ == 0) throw usage_error("volatile_image::arm_lazy: no image is mapped");
    if (lazy_ != nullptr) throw usage_error("volatile_image::arm_lazy: the image is armed already");
    if (source == nullptr) throw usage_error("volatile_image::arm_lazy: no source");
    const std::uint64_t page = page_size();
    auto s = std::make_unique<lazy_pages>();
    s->begin = base_;
    s->end = base_ + bytes_;
    s->page = page;
    s->source = source;
    void* st = ::mmap(nullptr, bytes_ / page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (st == map_failed)
        throw pool_error(pool_errc::io, "volatile image: cannot map the page states for lazy loading: " +
                                            std::string(std::strerror(errno)));
    s->state = static_cast<std::uint8_t*>(st);  // all absent (0)
    s->state_bytes = bytes_ / page;
    void* r = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == map_failed)
        throw pool_error(pool_errc::io, "volatile image: cannot reserve " + std::to_string(bytes_) +
                                            " bytes of staging pages for lazy loading: " + std::strerror(errno));
    s->reservoir = static_cast<std::byte*>(r);
    // A huge page would be split by the first page moved out of it: 4 KiB pages only.
    (void)::madvise(r, bytes_, MADV_NOHUGEPAGE);
    const auto fail = [&](const std::string& message, bool usage) {
        ::munmap(r, bytes_);
        if (usage) throw usage_error(message);
        throw pool_error(pool_errc::io, message);
    };
    try {
        install_handler();
    } catch (const pool_error& e) {
        fail(e.what(), false);
    }
    unsigned k = 0;
    for (; k < max_armed; ++k) {
        lazy_pages* expected = nullptr;
        s->slot = k;
        if (armed[k].image.compare_exchange_strong(expected, s.get(), std::memory_order_seq_cst)) break;
    }
    if (k == max_armed)
        fail("volatile_image::arm_lazy: " + std::to_string(max_armed) + " images are armed already (the most at once)",
             true);
    // Registered first: from here on, every access to the image faults into the handler.
    if (::mprotect(data(), bytes_, PROT_NONE) != 0) {
        const int err = errno;
        armed[k].image.store(nullptr, std::memory_order_seq_cst);
        while (armed[k].users.load(std::memory_order_seq_cst) != 0) ::sched_yield();
        fail("volatile image: cannot protect " + range_text(base_, bytes_) + " for lazy loading: " + std::strerror(err),
             false);
    }
    lazy_ = s.release();
}

std::uint64_t volatile_image::pages_loaded() const noexcept {
    return lazy_ != nullptr ? lazy_->loaded.load(std::memory_order_relaxed) : 0;
}

}  // namespace ferrite::checkpoint
