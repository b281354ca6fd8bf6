// bench/trees/tree_cpu.cpp: the 1-thread cost of YCSB A or C on volatile-tree and cpnvm-tree
// in CPU time (CLOCK_THREAD_CPUTIME_ID), for comparing variants of the CpNvm port on a loaded
// machine, where `ferrite bench`'s wall-clock Mops/s follow the other sessions' load.
//
// Builds the two trees once as their subjects do (tree_subjects.cpp: the plain tree from
// `new`, the port in a program_image of the same size and log, prefilled with a checkpoint
// after each insert, then sync), then runs rounds of `ops` operations of the workload's
// stream (get and put) on each variant in turn, the order rotating each round and each
// variant started with caches that hold neither tree (128 MiB touched, untimed: a variant run
// right after another on the same tree would find the hot keys cached and look faster), and
// prints per variant the median CPU ns per operation and the median of the per-round ratios
// volatile / variant (as the bench's cpnvm / volatile in operations per second). Variants:
//   volatile             btree, as volatile-tree runs it
//   cpnvm                cpnvm_btree, checkpoint() after each operation, as cpnvm-tree runs it
//   cpnvm-no-checkpoint  the same tree without the checkpoint() call (the memory's share)
//   checkpoint-only      the stream and checkpoint() with no tree operation
//   mark-only            the stream and a mark() of a line marked already (a put's common mark)
//   stream-only          the stream alone (checkpoint-only less this: one checkpoint() call)
// Not part of the build (no CMake target, nothing in CI): compile it against the release
// build (the libraries of tools/ferrite's link line), e.g.
//   g++ -std=c++20 -O3 -DNDEBUG -Iinclude -I. bench/trees/tree_cpu.cpp build/release/bench/libferrite_bench.a
//       build/release/crash/libferrite_crash_targets.a build/release/apps/kv/libferrite_kv_core.a
//       build/release/src/libferrite.a -lpmem2 -lpmemobj -lpthread -o /tmp/tree-cpu
//   /tmp/tree-cpu ycsb-c 1000000 15 400000      # workload, keys, rounds, ops per round
// Pools: /dev/shm. docs/checkpointing.md has what it measured.
#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/calibration/cpu_clock.hpp"
#include "bench/sets/set_pool.hpp"
#include "bench/trees/btree.hpp"
#include "bench/trees/cpnvm_btree.hpp"
#include "bench/workloads.hpp"
#include "ferrite/containers/program_image.hpp"

namespace {

using ferrite::bench::calibration::median;
using ferrite::bench::calibration::thread_cpu_ns;

using namespace ferrite;
using namespace ferrite::bench;

template <class Tree>
std::uint64_t one(Tree& t, const op_stream::step& s) {
    switch (s.o) {
    case op::get:
        if (const auto v = t.get(s.a)) return *v;
        return 0;
    case op::put: t.put(s.a, s.b); return 0;
    default: return 0;
    }
}

}  // namespace

int main(int argc, char** argv) {
    const std::string wname = argc > 1 ? argv[1] : "ycsb-c";
    const std::uint64_t keys = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1000000;
    const unsigned rounds = argc > 3 ? static_cast<unsigned>(std::atoi(argv[3])) : 15;
    const std::uint64_t ops = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 500000;
    const workload* w = find_workload(wname);
    if (w == nullptr) return std::fprintf(stderr, "no workload %s\n", wname.c_str()), 2;

    // volatile-tree, as its subject builds it
    btree<std::uint64_t, std::uint64_t> vt;
    for (std::uint64_t i = 0; i < keys; ++i) vt.insert(prefill_key(i), i);
    // cpnvm-tree, as its subject builds it (tree_subjects.cpp's cpnvm_options)
    using ctree = cpnvm_btree<std::uint64_t, std::uint64_t>;
    image_options o;
    o.image_bytes = std::max<std::uint64_t>(std::uint64_t{4} << 20, std::bit_ceil((2 * keys + (1 << 16)) * 200));
    o.max_threads = 2;
    o.log_bytes = std::min<std::uint64_t>(std::uint64_t{16} << 20, o.image_bytes / 4);
    set_pool pool("/dev/shm", 2 * std::bit_ceil(o.image_bytes + o.max_threads * o.log_bytes + (1 << 20)));
    std::optional<program_image> img(program_image::create(pool.pool(), pool.heap(), pool.anchor(), o));
    ctree::image = &*img;
    auto me = img->register_thread();
    auto* ct = new (img->allocate(sizeof(ctree))) ctree();
    for (std::uint64_t i = 0; i < keys; ++i) {
        ct->insert(prefill_key(i), i);
        img->checkpoint();
    }
    img->sync();

    struct variant {
        const char* name;
        std::function<std::uint64_t(const op_stream::step&)> run;
    };
    std::vector<variant> vs = {
        {"volatile", [&](const op_stream::step& s) { return one(vt, s); }},
        {"cpnvm", [&](const op_stream::step& s) { const auto r = one(*ct, s); img->checkpoint(); return r; }},
        {"cpnvm-no-checkpoint", [&](const op_stream::step& s) { return one(*ct, s); }},
        {"checkpoint-only", [&](const op_stream::step& s) { return s.a + img->checkpoint(); }},
        {"mark-only", [&](const op_stream::step& s) { img->mark(ct, 8); return s.a; }},
        {"stream-only", [&](const op_stream::step& s) { return s.a; }},
    };
    std::vector<op_stream> streams;
    for (std::size_t v = 0; v < vs.size(); ++v) streams.emplace_back(*w, 0, 42, keys, key_options{});
    std::vector<std::vector<double>> ns(vs.size()), ratio(vs.size());
    std::uint64_t sink = 0;
    std::vector<std::uint64_t> evict(std::size_t{128} << 17);  // 128 MiB, four times the L3
    for (unsigned r = 0; r < rounds; ++r) {
        std::vector<double> t(vs.size());
        for (std::size_t k = 0; k < vs.size(); ++k) {
            const std::size_t v = (k + r) % vs.size();  // the order rotates each round
            // Every variant starts with caches holding none of either tree (untimed): a
            // variant run right after another on the same tree would find its hot keys cached.
            for (std::size_t i = 0; i < evict.size(); i += 8) evict[i] += 1;
            const double t0 = thread_cpu_ns();
            for (std::uint64_t i = 0; i < ops; ++i) sink += vs[v].run(streams[v].next());
            t[v] = (thread_cpu_ns() - t0) / static_cast<double>(ops);
            ns[v].push_back(t[v]);
        }
        for (std::size_t v = 0; v < vs.size(); ++v) ratio[v].push_back(t[0] / t[v]);
    }
    std::printf("%s, %llu keys, %u rounds of %llu ops (sink %llu):\n", wname.c_str(),
                static_cast<unsigned long long>(keys), rounds, static_cast<unsigned long long>(ops),
                static_cast<unsigned long long>(sink % 10));
    for (std::size_t v = 0; v < vs.size(); ++v)
        std::printf("  %-22s %7.1f ns/op [%.1f-%.1f]  volatile/this median %.3f [%.3f-%.3f]\n", vs[v].name,
                    median(ns[v]), *std::min_element(ns[v].begin(), ns[v].end()),
                    *std::max_element(ns[v].begin(), ns[v].end()), median(ratio[v]),
                    *std::min_element(ratio[v].begin(), ratio[v].end()),
                    *std::max_element(ratio[v].begin(), ratio[v].end()));
    ctree::image = nullptr;
}
