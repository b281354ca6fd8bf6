// Backend detection and selection (see ferrite/pmem/backend.hpp).
#include "ferrite/pmem/backend.hpp"

#include <cpuid.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "ferrite/error.hpp"
#include "ferrite/pmem/pool.hpp"
#include "ferrite/pmem/primitives.hpp"
#include "ferrite/pmem/detail/dispatch.hpp"

namespace ferrite::pmem {
namespace {

struct cpu_features {
    bool clflush = false, clflushopt = false, clwb = false;
};

cpu_features read_cpuid() noexcept {
    cpu_features f;
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid(1, &a, &b, &c, &d)) f.clflush = (d >> 19) & 1u;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
        f.clflushopt = (b >> 23) & 1u;
        f.clwb = (b >> 24) & 1u;
    }
    return f;
}

const cpu_features& features() noexcept {
    static const cpu_features f = read_cpuid();
    return f;
}

std::atomic<backend> g_backend{backend::clflush};
std::atomic<bool> g_backend_resolved{false};

// Who chose the backend (backend.hpp's rules), and why; guarded by choice_lock.
enum class chooser { platform, environment, program };
std::mutex choice_lock;
chooser g_chooser = chooser::platform;
bool g_seen_flushing_pool = false;  // a pool of cache-line or page granularity was mapped
std::string g_reason;

std::string best_write_back() { return std::string(to_string(detect_backend())); }
std::atomic<std::uint32_t> g_pwb_ns{emulated_latency{}.pwb_ns};
std::atomic<std::uint32_t> g_fence_ns{emulated_latency{}.fence_ns};

}  // namespace

std::string_view to_string(backend b) noexcept {
    switch (b) {
        case backend::clwb: return "clwb";
        case backend::clflushopt: return "clflushopt";
        case backend::clflush: return "clflush";
        case backend::none: return "none";
        case backend::emulated: return "emulated";
    }
    return "?";
}

std::optional<backend> backend_from_string(std::string_view s) noexcept {
    for (backend b : all_backends)
        if (to_string(b) == s) return b;
    return std::nullopt;
}

bool cpu_supports(backend b) noexcept {
    switch (b) {
        case backend::clwb: return features().clwb;
        case backend::clflushopt: return features().clflushopt;
        case backend::clflush: return features().clflush;
        case backend::none:
        case backend::emulated: return true;
    }
    return false;
}

backend detect_backend() noexcept {
    if (features().clwb) return backend::clwb;
    if (features().clflushopt) return backend::clflushopt;
    return backend::clflush;
}

namespace detail {

// Resolve the backend on first use: FERRITE_BACKEND (or FERRITE_PMEM_BACKEND) if set and
// valid, else the CPU's best write-back until a pool mapping says more. An invalid value
// is ignored with a one-line warning rather than aborting the program.
void resolve_backend_once() noexcept {
    if (g_backend_resolved.load(std::memory_order_acquire)) return;
    std::lock_guard guard(choice_lock);
    if (g_backend_resolved.load(std::memory_order_relaxed)) return;
    backend chosen = detect_backend();
    g_reason = "no pool mapped yet: the CPU's best write-back (" + best_write_back() + ")";
    for (const char* name : {"FERRITE_BACKEND", "FERRITE_PMEM_BACKEND"}) {
        const char* env = std::getenv(name);
        if (!env || !*env) continue;
        auto b = backend_from_string(env);
        if (b && cpu_supports(*b)) {
            chosen = *b;
            g_chooser = chooser::environment;
            g_reason = std::string(name) + "=" + env + " (the environment overrides the platform)";
        } else {
            std::fprintf(stderr,
                         "ferrite: %s=%s is not a backend this CPU supports "
                         "(clwb, clflushopt, clflush, none, emulated); using %s\n",
                         name, env, std::string(to_string(chosen)).c_str());
        }
        break;
    }
    g_backend.store(chosen, std::memory_order_relaxed);
    g_backend_resolved.store(true, std::memory_order_release);
    refresh_mode();
}

void note_pool_granularity(granularity g) noexcept {
    resolve_backend_once();
    std::lock_guard guard(choice_lock);
    if (g_chooser != chooser::platform) return;
    backend chosen = detect_backend();
    try {
        if (g == granularity::byte && !g_seen_flushing_pool) {
            chosen = backend::none;
            g_reason = "byte granularity (libpmem2): the CPU caches are in the persistence domain (eADR, or a "
                       "CXL persistent cache domain), so fences only, no write-back";
        } else if (g == granularity::byte) {
            g_reason = "a pool of byte granularity, but another one of this process needs write-back: " +
                       best_write_back();
        } else {
            g_seen_flushing_pool = true;
            g_reason = g == granularity::cache_line
                           ? "cache-line granularity (libpmem2): write-back needed, the CPU's best is " +
                                 best_write_back()
                           : "page granularity (libpmem2: tmpfs or the page cache, the stand-in for persistent "
                             "memory): the cache-line default, " +
                                 best_write_back();
        }
    } catch (...) {  // std::bad_alloc building the sentence: the choice stands without it
    }
    g_backend.store(chosen, std::memory_order_relaxed);
    refresh_mode();
}

void forget_backend_choice() noexcept {
    std::lock_guard guard(choice_lock);
    g_chooser = chooser::platform;
    g_seen_flushing_pool = false;
    g_reason.clear();
    g_backend_resolved.store(false, std::memory_order_release);
}

backend resolved_backend() noexcept {
    resolve_backend_once();
    return g_backend.load(std::memory_order_relaxed);
}

void refresh_mode() noexcept {
    mode m = mode::slow;
    if (installed_observer() == nullptr) {
        switch (g_backend.load(std::memory_order_relaxed)) {
            case backend::clwb: m = mode::clwb; break;
            case backend::clflushopt: m = mode::clflushopt; break;
            case backend::clflush: m = mode::clflush; break;
            case backend::none:
            case backend::emulated: m = mode::slow; break;
        }
    }
    g_mode.store(m, std::memory_order_relaxed);
}

}  // namespace detail

backend current_backend() noexcept { return detail::resolved_backend(); }

void set_backend(backend b) {
    if (!cpu_supports(b))
        throw usage_error("persistence backend '" + std::string(to_string(b)) +
                          "' is not supported by this CPU; use '" +
                          std::string(to_string(detect_backend())) + "' (detected) instead");
    detail::resolve_backend_once();
    std::lock_guard guard(choice_lock);
    g_chooser = chooser::program;
    g_reason = "set by the program (set_backend)";
    g_backend.store(b, std::memory_order_relaxed);
    detail::refresh_mode();
}

std::string backend_reason() {
    detail::resolve_backend_once();
    std::lock_guard guard(choice_lock);
    return g_reason;
}

void set_emulated_latency(emulated_latency l) noexcept {
    g_pwb_ns.store(l.pwb_ns, std::memory_order_relaxed);
    g_fence_ns.store(l.fence_ns, std::memory_order_relaxed);
}

emulated_latency current_emulated_latency() noexcept {
    return {g_pwb_ns.load(std::memory_order_relaxed), g_fence_ns.load(std::memory_order_relaxed)};
}

}  // namespace ferrite::pmem
