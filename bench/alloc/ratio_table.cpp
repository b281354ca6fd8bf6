// bench/alloc/ratio_table.cpp: the collecting reporter and the ratio table.
#include "bench/alloc/ratio_table.hpp"

#include <cstdio>
#include <ostream>
#include <set>
#include <utility>

namespace ferrite::bench::alloc_bench {

const char* to_string(subject s) noexcept {
    switch (s) {
        case subject::buddy: return "buddy";
        case subject::pmdk: return "pmdk";
        case subject::volatile_heap: return "volatile";
    }
    return "?";
}

void collecting_reporter::ReportRuns(const std::vector<Run>& runs) {
    for (const Run& r : runs) {
        if (r.error_occurred) {
            failures_.push_back(r.benchmark_name() + ": " + r.error_message);
            continue;
        }
        const auto id = ids_.find(r.run_name.function_name);
        if (id == ids_.end()) continue;
        const auto rate = r.counters.find("items_per_second");
        if (rate == r.counters.end()) continue;
        value& v = results_[key{id->second.bytes, r.threads, id->second.who}];
        if (r.run_type == Run::RT_Aggregate) {
            if (r.aggregate_name == "median") v.median = rate->second.value;
        } else {
            v.single = rate->second.value;
            ++v.repetitions;
        }
    }
    ConsoleReporter::ReportRuns(runs);
}

namespace {

std::string size_label(std::size_t bytes) {
    if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes / 1024) + " KiB";
    return std::to_string(bytes) + " B";
}

std::string fixed(double x, int decimals) {
    if (x <= 0) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
    return buf;
}

}  // namespace

void collecting_reporter::print_table(std::ostream& out) const {
    std::set<std::pair<std::size_t, std::int64_t>> rows;
    bool medians = false;
    for (const auto& [k, v] : results_) {
        rows.emplace(k.bytes, k.threads);
        medians = medians || v.median > 0;
    }
    auto mpairs = [&](std::size_t bytes, std::int64_t threads, subject who) {
        const auto it = results_.find(key{bytes, threads, who});
        if (it == results_.end()) return -1.0;
        const double ips = it->second.median > 0 ? it->second.median : it->second.single;
        return ips > 0 ? ips / 1e6 : -1.0;
    };
    auto ratio = [](double a, double b) { return a > 0 && b > 0 ? a / b : -1.0; };

    out << "\nAllocator ratio table: allocate/free pairs, Mpairs/s ("
        << (medians ? "median of the repetitions" : "single run") << ")\n";
    char line[160];
    std::snprintf(line, sizeof line, "%-8s %7s %9s %9s %9s %11s %15s\n", "size", "threads",
                  "buddy", "pmdk", "volatile", "buddy/pmdk", "buddy/volatile");
    out << line;
    for (const auto& [bytes, threads] : rows) {
        const double b = mpairs(bytes, threads, subject::buddy);
        const double p = mpairs(bytes, threads, subject::pmdk);
        const double v = mpairs(bytes, threads, subject::volatile_heap);
        std::snprintf(line, sizeof line, "%-8s %7lld %9s %9s %9s %11s %15s\n",
                      size_label(bytes).c_str(), static_cast<long long>(threads),
                      fixed(b, 3).c_str(), fixed(p, 3).c_str(), fixed(v, 3).c_str(),
                      fixed(ratio(b, p), 2).c_str(), fixed(ratio(b, v), 2).c_str());
        out << line;
    }
    if (rows.empty()) out << "(no allocator benchmark ran: check --benchmark_filter)\n";
    out.flush();
}

}  // namespace ferrite::bench::alloc_bench
