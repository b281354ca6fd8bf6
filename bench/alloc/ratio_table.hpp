// bench/alloc/ratio_table.hpp: a Google Benchmark console reporter that also keeps the
// throughput of every allocator benchmark, and the ratio table printed after the run.
//
// With --benchmark_repetitions=N (N > 1) the table uses benchmark's "median" aggregate rows;
// with a single repetition, the one run. (A display reporter passed to RunSpecifiedBenchmarks
// does not see --benchmark_color, so main() decides the colour itself.) Benchmarks that were filtered out or failed show "-".
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace ferrite::bench::alloc_bench {

enum class subject : std::uint8_t { buddy, pmdk, volatile_heap };
const char* to_string(subject) noexcept;

// What one registered benchmark measures; keyed by the name given to RegisterBenchmark.
struct bench_id {
    subject who;
    std::size_t bytes;
};

class collecting_reporter : public benchmark::ConsoleReporter {
public:
    collecting_reporter(std::map<std::string, bench_id> ids, bool color)
        : benchmark::ConsoleReporter(color ? OO_ColorTabular : OO_Tabular), ids_(std::move(ids)) {}

    void ReportRuns(const std::vector<Run>& runs) override;

    // The ratio table (Mpairs/s and ratios per size and thread count).
    void print_table(std::ostream& out) const;
    // Runs that failed (SkipWithError), by name.
    const std::vector<std::string>& failures() const noexcept { return failures_; }

private:
    struct key {
        std::size_t bytes;
        std::int64_t threads;
        subject who;
        auto operator<=>(const key&) const = default;
    };
    struct value {
        double single = -1;  // items_per_second of the (last) plain run
        double median = -1;  // of the median aggregate
        int repetitions = 0;
    };
    std::map<std::string, bench_id> ids_;
    std::map<key, value> results_;
    std::vector<std::string> failures_;
};

}  // namespace ferrite::bench::alloc_bench
