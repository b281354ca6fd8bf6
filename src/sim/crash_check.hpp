// Internal to the campaign: judge one crash image (recover, maybe crash recovery, verify).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ferrite/sim/site_registry.hpp"
#include "ferrite/sim/target.hpp"

namespace ferrite::sim::detail {

struct crash_verdict {
    std::string what;                             // empty: consistent
    std::optional<std::uint64_t> recovery_event;  // recovery was crashed at this event
};

class crash_checker {
public:
    // `image_path`: a scratch file the checker owns (created on first use, removed by the
    // destructor). `layout`: the layout name of the pools the target creates.
    crash_checker(std::filesystem::path image_path, std::string layout, site_registry& sites,
                  double recovery_crash_rate);
    ~crash_checker();
    crash_checker(const crash_checker&) = delete;
    crash_checker& operator=(const crash_checker&) = delete;

    // Map `image` as a pool, recover (crashing recovery with probability rate, drawn from
    // `seed`) and verify against `at_crash`. The calling thread's session binding is
    // suspended meanwhile.
    crash_verdict check(const std::vector<std::byte>& image, const workload& w,
                        const progress_snapshot& at_crash, std::uint64_t seed);

private:
    void write_image(const std::vector<std::byte>& image);
    void recover_observed(const workload& w, pmem::pool& p, std::optional<std::uint64_t> crash_at,
                          std::uint64_t seed, std::vector<std::byte>* crashed,
                          std::uint64_t* events);

    std::filesystem::path path_;
    std::string layout_;
    site_registry& sites_;
    double rate_;
    int fd_ = -1;
    std::vector<std::byte> scratch_;
};

}  // namespace ferrite::sim::detail
