// bench/trees/log_copy_cpu.cpp: the snapshot's copy into the log and the apply, alone, in CPU
// time (CLOCK_THREAD_CPUTIME_ID): what one checkpoint of YCSB A at one thread costs per logged
// line, and how much of a hot set it leaves to be read back from memory afterwards.
//
// One epoch_log (one thread, a 16 MiB log, a 256 MiB image, in ordinary memory), a volatile
// image of the same size, and `lines` distinct lines of it drawn at random and sorted (the
// snapshot's order: cpnvm-tree's YCSB A at one thread logs about 60,000 lines an epoch).
// Each round: read a hot set (`hot_mib` MiB, standing for the tree's cached lines), then time
// the snapshot's part (append of each line as a one-line record, prefetching 8 ahead as
// checkpointer::snapshot does, then seal), the commit and apply (epoch_log::apply of each
// line from the volatile image, finish_replay), and a second read of the hot set (what the
// checkpoint displaced). Prints the median of the rounds per step, ns per line (the hot set:
// ns per hot line). For comparing log formats (build it against each build's libraries).
// Not part of the build (no CMake target, nothing in CI): compile it against the release
// build, e.g.
//   g++ -std=c++20 -O3 -DNDEBUG -Iinclude bench/trees/log_copy_cpu.cpp build/release/src/libferrite.a
//       -lpmem2 -lpmemobj -lpthread -o /tmp/log-copy-cpu
//   /tmp/log-copy-cpu 60000 15 4      # lines an epoch, rounds, hot set MiB
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <vector>

#include "bench/calibration/cpu_clock.hpp"
#include "ferrite/checkpoint/epoch_log.hpp"

namespace {

using ferrite::bench::calibration::median;
using ferrite::bench::calibration::thread_cpu_ns;

std::byte* aligned(std::size_t n) {
    auto* p = static_cast<std::byte*>(::operator new[](n, std::align_val_t{4096}));
    std::memset(p, 1, n);
    return p;
}

std::uint64_t read_all(const std::byte* p, std::size_t n) {
    std::uint64_t s = 0;
    for (std::size_t i = 0; i < n; i += 64) s += static_cast<std::uint64_t>(p[i]);
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace ferrite::checkpoint;
    const std::size_t lines = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 60000;
    const unsigned rounds = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 15;
    const std::size_t hot = (argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 4) << 20;
    const log_geometry g{1, std::uint64_t{16} << 20, std::uint64_t{256} << 20};
    const auto bytes = region_bytes(g);
    std::byte* region = aligned(bytes);
    std::byte* image = aligned(g.image_bytes);
    std::byte* hot_set = aligned(hot);
    auto log = epoch_log::create(region, bytes, g);
    std::mt19937_64 rng(42);
    std::vector<std::uint64_t> chosen;
    std::vector<char> taken(g.image_bytes / 64);
    while (chosen.size() < lines) {
        const auto l = rng() % taken.size();
        if (!taken[l]) {
            taken[l] = 1;
            chosen.push_back(l);
        }
    }
    std::sort(chosen.begin(), chosen.end());
    std::vector<double> snap, apply, reread;
    std::uint64_t sink = 0;
    for (unsigned r = 0; r < rounds + 1; ++r) {  // round 0 warms up, not counted
        const std::uint64_t epoch = log.committed_epoch() + 1;
        for (const auto l : chosen) image[l * 64] = static_cast<std::byte>(epoch);  // the program's writes
        sink += read_all(hot_set, hot);
        double t0 = thread_cpu_ns();
        for (std::size_t i = 0; i < chosen.size(); ++i) {
            if (i + 8 < chosen.size()) __builtin_prefetch(image + chosen[i + 8] * 64, 0);
            if (!log.append(0, epoch, chosen[i] * 64, image + chosen[i] * 64, 64)) return 1;
        }
        log.seal(0);
        double t1 = thread_cpu_ns();
        log.commit(epoch);
        for (std::size_t i = 0; i < chosen.size(); ++i) {
            if (i + 8 < chosen.size()) __builtin_prefetch(image + chosen[i + 8] * 64, 0);
            log.apply(chosen[i] * 64, image + chosen[i] * 64, 64);
        }
        log.finish_replay();
        double t2 = thread_cpu_ns();
        sink += read_all(hot_set, hot);
        double t3 = thread_cpu_ns();
        if (r == 0) continue;
        snap.push_back((t1 - t0) / static_cast<double>(lines));
        apply.push_back((t2 - t1) / static_cast<double>(lines));
        reread.push_back((t3 - t2) / static_cast<double>(hot / 64));
    }
    std::printf("%zu lines an epoch, %u rounds, hot set %zu MiB (sink %llu)\n", lines, rounds, hot >> 20,
                static_cast<unsigned long long>(sink % 10));
    std::printf("  append + seal    %6.2f ns/line [%.2f-%.2f]\n", median(snap), *std::min_element(snap.begin(), snap.end()),
                *std::max_element(snap.begin(), snap.end()));
    std::printf("  commit + apply   %6.2f ns/line [%.2f-%.2f]\n", median(apply), *std::min_element(apply.begin(), apply.end()),
                *std::max_element(apply.begin(), apply.end()));
    std::printf("  hot set re-read  %6.2f ns/hot line [%.2f-%.2f]\n", median(reread),
                *std::min_element(reread.begin(), reread.end()), *std::max_element(reread.begin(), reread.end()));
    return 0;
}
