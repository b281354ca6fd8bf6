// bench/calibration/fence_floor.cpp: the fence-floor structures (fence_floor.hpp).
#include "bench/calibration/fence_floor.hpp"

#include <cstdint>
#include <cstring>
#include <string>

#include "bench/containers/scratch_pool.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace ferrite::bench {
namespace {

constexpr unsigned ring_lines = 64;  // per thread: 4 KiB, so 4096 threads fit the scratch heap
constexpr unsigned line = pmem::cache_line_size;

class fence_floor final : public subject {
public:
    fence_floor(const subject_config& cfg, unsigned lines)
        : scratch_(cfg.pool_dir), lines_(lines), next_(cfg.threads) {
        const std::uint64_t bytes = std::uint64_t{cfg.threads} * ring_lines * line;  // freed with the pool file
        region_ = static_cast<std::byte*>(scratch_.heap().allocate(bytes));
        std::memset(region_, 0, bytes);
    }

    void run(unsigned tid, op, std::uint64_t a, std::uint64_t) override {
        auto& next = next_[tid].line;
        std::byte* ring = region_ + std::uint64_t{tid} * ring_lines * line;
        for (unsigned i = 0; i < lines_; ++i) {  // k consecutive lines of the ring
            auto* word = reinterpret_cast<std::uint64_t*>(ring + ((next + i) % ring_lines) * line);
            *word = a;
            pmem::pwb(word);
        }
        pmem::pfence();
        next = (next + lines_) % ring_lines;
    }

private:
    struct alignas(64) cursor {
        unsigned line = 0;
    };
    scratch_pool scratch_;
    unsigned lines_;
    std::vector<cursor> next_;  // per thread, a line apart
    std::byte* region_ = nullptr;
};

const std::vector<op> every_sequence_op = {op::push_back, op::pop_back, op::push_front,
                                           op::pop_front, op::get,      op::swap};

std::string name_for(unsigned lines) {
    std::string n = "fence-floor";
    if (lines > 1) n.append("-").append(std::to_string(lines));
    return n;
}

}  // namespace

void register_fence_floor_subjects(std::vector<subject_kind>& out) {
    for (unsigned k : {1u, 2u, 4u, 8u}) {
        std::string summary = "calibration: store to ";
        summary.append(std::to_string(k)).append(k == 1 ? " line" : " lines").append(", pwb each, one pfence per op");
        if (k == 1) summary.append(" (the one-fence limit; list it first to read others as a fraction)");
        out.push_back({name_for(k), std::move(summary), every_sequence_op,
                       [k](const subject_config& cfg) -> std::unique_ptr<subject> {
                           return std::make_unique<fence_floor>(cfg, k);
                       }});
    }
}

}  // namespace ferrite::bench
