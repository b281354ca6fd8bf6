// Judging one crash image (see crash_check.hpp and ferrite/sim/campaign.hpp).
#include "crash_check.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ferrite/error.hpp"
#include "ferrite/pmem/pool.hpp"
#include "ferrite/sim/rng.hpp"
#include "ferrite/sim/session.hpp"

namespace ferrite::sim::detail {

crash_checker::crash_checker(std::filesystem::path image_path, std::string layout,
                             site_registry& sites, double recovery_crash_rate)
    : path_(std::move(image_path)), layout_(std::move(layout)), sites_(sites), rate_(recovery_crash_rate) {}

crash_checker::~crash_checker() {
    if (fd_ >= 0) {
        ::close(fd_);
        ::unlink(path_.c_str());
    }
}

void crash_checker::write_image(const std::vector<std::byte>& image) {
    if (fd_ < 0) {
        ::unlink(path_.c_str());
        fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd_ < 0)
            throw error("crash simulator: cannot create scratch file '" + path_.string() +
                        "': " + std::strerror(errno) + "; pass --scratch-dir with a writable tmpfs");
    }
    std::size_t done = 0;
    while (done < image.size()) {
        auto n = ::pwrite(fd_, image.data() + done, image.size() - done, static_cast<off_t>(done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            throw error("crash simulator: cannot write scratch file '" + path_.string() +
                        "': " + std::strerror(errno));
        done += static_cast<std::size_t>(n);
    }
}

// Run w.recover(p) bound to a fresh session over p. With crash_at, copy the crash image
// taken before that recovery event into *crashed (the rest of the recovery still runs, and
// is then discarded by the caller). *events receives the number of recovery events.
void crash_checker::recover_observed(const workload& w, pmem::pool& p,
                                     std::optional<std::uint64_t> crash_at, std::uint64_t seed,
                                     std::vector<std::byte>* crashed, std::uint64_t* events) {
    session::options opts;
    session* self = nullptr;
    if (crash_at)
        opts.at_event = [&](std::uint64_t e) {
            if (e == *crash_at) self->crash_image(mix(seed, e), *crashed);
        };
    session s(p.base(), p.size(), 1, sites_, std::move(opts));
    self = &s;
    {
        session::binding bind(&s, 0);
        w.recover(p);
    }
    if (events) *events = s.events();
}

crash_verdict crash_checker::check(const std::vector<std::byte>& image, const workload& w,
                                   const progress_snapshot& at_crash, std::uint64_t seed) {
    session::binding unbound(nullptr, 0);  // opening and closing pools is not under test
    crash_verdict v;
    try {
        write_image(image);
        auto p = pmem::pool::open(path_, layout_);
        rng random(mix(seed, 0xc4a5));
        if (random.chance(rate_)) {
            // Count recovery's events on this image, restore it, crash recovery at one of
            // them, and make the interrupted recovery's crash image the pool's contents.
            std::uint64_t events = 0;
            recover_observed(w, p, std::nullopt, seed, nullptr, &events);
            std::memcpy(p.base(), image.data(), image.size());
            if (events > 0) {
                const auto at = 1 + random.below(events);
                recover_observed(w, p, at, seed, &scratch_, nullptr);
                std::memcpy(p.base(), scratch_.data(), scratch_.size());
                v.recovery_event = at;
            }
        }
        recover_observed(w, p, std::nullopt, seed, nullptr, nullptr);
        v.what = w.verify(p, at_crash);
    } catch (const std::exception& e) {
        v.what = std::string("recovery failed: ") + e.what();
    }
    return v;
}

}  // namespace ferrite::sim::detail
