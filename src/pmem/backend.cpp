// Backend detection and selection (see ferrite/pmem/backend.hpp).
#include "ferrite/pmem/backend.hpp"

#include <cpuid.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "ferrite/error.hpp"
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

// Resolve the backend on first use: FERRITE_PMEM_BACKEND if set and valid, else CPUID.
// An invalid value is ignored with a one-line warning rather than aborting the program.
void resolve_backend_once() noexcept {
    if (g_backend_resolved.load(std::memory_order_acquire)) return;
    backend chosen = detect_backend();
    if (const char* env = std::getenv("FERRITE_PMEM_BACKEND"); env && *env) {
        auto b = backend_from_string(env);
        if (b && cpu_supports(*b))
            chosen = *b;
        else
            std::fprintf(stderr,
                         "ferrite: FERRITE_PMEM_BACKEND=%s is not a backend this CPU supports "
                         "(clwb, clflushopt, clflush, none, emulated); using %s\n",
                         env, std::string(to_string(chosen)).c_str());
    }
    g_backend.store(chosen, std::memory_order_relaxed);
    g_backend_resolved.store(true, std::memory_order_release);
    refresh_mode();
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
    g_backend.store(b, std::memory_order_relaxed);
    g_backend_resolved.store(true, std::memory_order_release);
    detail::refresh_mode();
}

void set_emulated_latency(emulated_latency l) noexcept {
    g_pwb_ns.store(l.pwb_ns, std::memory_order_relaxed);
    g_fence_ns.store(l.fence_ns, std::memory_order_relaxed);
}

emulated_latency current_emulated_latency() noexcept {
    return {g_pwb_ns.load(std::memory_order_relaxed), g_fence_ns.load(std::memory_order_relaxed)};
}

}  // namespace ferrite::pmem
