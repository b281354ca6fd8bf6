// ferrite/sim/site_registry.hpp: every persistence call site, by id, for mutation testing.
//
// Each primitive passes its caller's std::source_location to the observer (see
// ferrite/pmem/observer.hpp). The registry turns it into a stable, human-readable id
// ("include/ferrite/alloc/buddy.hpp:120:13") and keeps per-site facts a campaign reports:
// how often the site ran, how often it wrote back a line that held nothing new (a double
// flush, FlowNvm's anti-pattern), how often a fence had nothing to order (an unnecessary
// fence). A site can be switched off: the simulator then treats its call as if it were not
// in the program (flush mutation testing: the campaign must notice, or the site was
// redundant).
//
// Thread-safe. Ids are interned by (file, line, column, kind); the file part is the path
// from the last "include/", "src/", "tests/", "tools/", "crash/" or "apps/" component, so ids are the same on
// every checkout.
#pragma once

#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ferrite/pmem/observer.hpp"

namespace ferrite::sim {

enum class site_kind : std::uint8_t { pwb, pfence, psync, nt_store };
std::string_view to_string(site_kind) noexcept;

struct site_report {
    std::string id;        // "path:line:column"
    std::string function;  // enclosing function, as the compiler names it
    site_kind kind;
    std::uint64_t calls = 0;
    std::uint64_t redundant_flushes = 0;  // pwb of a line with nothing new since its last pwb
    std::uint64_t empty_fences = 0;       // fence with no pending write-back or NT store
};

class site_registry {
public:
    using site_id = std::uint32_t;

    site_id intern(const pmem::site& where, site_kind kind);
    void count_call(site_id) noexcept;
    void count_redundant_flush(site_id) noexcept;
    void count_empty_fence(site_id) noexcept;

    // Switch sites off by id (flush mutation testing). Unknown ids are kept: a site is known
    // only once it has run.
    void disable(const std::string& id);
    bool disabled(site_id) const noexcept;

    std::vector<site_report> report() const;  // sorted by id

    // The id a source location gets (exposed for tests and messages).
    static std::string id_of(const pmem::site& where);

private:
    struct key {
        const char* file;
        std::uint32_t line, column;
        site_kind kind;
        bool operator==(const key&) const = default;
    };
    struct key_hash {
        std::size_t operator()(const key& k) const noexcept;
    };
    mutable std::mutex mutex_;
    std::unordered_map<key, site_id, key_hash> ids_;
    std::vector<site_report> sites_;
    std::vector<char> disabled_flags_;  // by site id
    std::set<std::string> disabled_ids_;
};

}  // namespace ferrite::sim
