// `ferrite tree-kill`: the ordered index's recovery after kill -9 (issue 21's "a 10M-key tree
// reopened after kill -9 answers its first get in < 50 ms"), measured the honest way.
//
// A child process creates a store holding an ordered_map (containers/ordered_map.hpp), loads
// --keys keys in a scattered order (a bijective multiplicative hash of 0..N-1) with the 64 ms
// epoch ticker running, syncs, then updates --updates keys (epochs end under it; the last is
// unfinished) and reports that it is ready; the parent kills it with SIGKILL. The parent keeps
// the file as the crash image; then, --reps times and alternating lazy and eager recovery,
// it copies the image to a fresh file and times, in this process: store::open (pool map,
// heap and catalog recovery and validation), opening the map (the tree's recovery), and the
// first completed get of a key loaded before the sync. The first repetition of each mode also
// checks (untimed) that every loaded key is there. Prints each repetition and the medians.
// The files live in --pool-dir (default /dev/shm) and are removed at the end.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "commands.hpp"
#include "ferrite/containers/catalog.hpp"
#include "ferrite/containers/store.hpp"
#include "ferrite/error.hpp"

namespace ferrite::cli {
namespace {

using clock_type = std::chrono::steady_clock;
constexpr std::uint64_t mix = 0x9E3779B97F4A7C15ull;  // odd: i -> i * mix is a bijection of 64-bit words
std::uint64_t key_of(std::uint64_t i) noexcept { return i * mix; }

struct tree_kill_args {
    std::uint64_t keys = 1000000;
    std::uint64_t updates = 0;  // 0: keys / 10
    unsigned reps = 5;
    std::string pool = "ferrite-tree-kill";
};

ordered_map_options map_options(std::uint64_t keys, bool eager) {
    ordered_map_options o;
    o.nodes = keys * 3 / 20 + 4096;  // leaves hold 7 to 14 keys
    o.eager_recovery = eager;
    return o;
}

[[noreturn]] void child(const std::filesystem::path& path, const tree_kill_args& a, int ready_fd) {
    try {
        store_options so;
        so.size = map_options(a.keys, false).nodes * 320 * 2 + (std::uint64_t{64} << 20);
        auto s = store::create(path, "tree-kill", so);
        auto m = s.names().open_ordered_map<std::uint64_t, std::uint64_t>("tree", map_options(a.keys, false));
        for (std::uint64_t i = 0; i < a.keys; ++i) m->insert(key_of(i), i);
        m->sync();
        const std::uint64_t updates = a.updates != 0 ? a.updates : a.keys / 10;
        for (std::uint64_t j = 0; j < updates; ++j) m->insert_or_assign(key_of((j * 7919) % a.keys), j);
        const char ready = 'r';
        if (::write(ready_fd, &ready, 1) != 1) ::_exit(2);
        for (;;) ::pause();  // killed here, an epoch unfinished
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tree-kill child: %s\n", e.what());
        ::_exit(1);
    }
}

double ms(clock_type::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }
double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

int run(const common_options& common, const tree_kill_args& a) {
    if (a.keys < 2 || a.reps == 0) throw usage_error("tree-kill: --keys must be at least 2 and --reps at least 1");
    const auto path = common.resolve(a.pool);
    const auto image = std::filesystem::path(path.string() + ".image");
    const auto copy = std::filesystem::path(path.string() + ".copy");
    for (const auto& p : {path, image, copy}) std::filesystem::remove(p);
    int fds[2];
    if (::pipe(fds) != 0) throw error("tree-kill: pipe failed");
    std::fflush(stdout);
    const pid_t pid = ::fork();
    if (pid < 0) throw error("tree-kill: fork failed");
    if (pid == 0) {
        ::close(fds[0]);
        child(path, a, fds[1]);
    }
    ::close(fds[1]);
    const auto load_start = clock_type::now();
    char ready = 0;
    const bool ok = ::read(fds[0], &ready, 1) == 1;
    ::close(fds[0]);
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!ok) throw error("tree-kill: the child failed before it was ready (see its message)");
    std::printf("child loaded %llu keys, updated %llu more and was killed (SIGKILL) after %.1f s\n",
                static_cast<unsigned long long>(a.keys),
                static_cast<unsigned long long>(a.updates != 0 ? a.updates : a.keys / 10),
                ms(clock_type::now() - load_start) / 1000);
    std::filesystem::rename(path, image);

    std::vector<double> total[2], store_open[2], map_open[2], first_get[2];
    const std::uint64_t probe = a.keys / 2;
    for (unsigned rep = 0; rep < a.reps; ++rep)
        for (const bool eager : {false, true}) {
            std::filesystem::copy_file(image, copy, std::filesystem::copy_options::overwrite_existing);
            const auto t0 = clock_type::now();
            auto s = store::open(copy, "tree-kill");
            const auto t1 = clock_type::now();
            auto m = s.names().open_ordered_map<std::uint64_t, std::uint64_t>("tree", map_options(a.keys, eager));
            const auto t2 = clock_type::now();
            const auto v = m->get(key_of(probe));
            const auto t3 = clock_type::now();
            if (v != probe) throw error("tree-kill: the first get did not find the loaded key " + std::to_string(probe));
            const int i = eager ? 1 : 0;
            store_open[i].push_back(ms(t1 - t0));
            map_open[i].push_back(ms(t2 - t1));
            first_get[i].push_back(ms(t3 - t2));
            total[i].push_back(ms(t3 - t0));
            std::printf("rep %u %-5s store open %8.2f ms  map open %8.2f ms  first get %7.3f ms  total %8.2f ms  (%llu nodes recovered lazily by then)\n",
                        rep, eager ? "eager" : "lazy", store_open[i].back(), map_open[i].back(), first_get[i].back(),
                        total[i].back(), static_cast<unsigned long long>(m->tree().lazily_recovered()));
            if (rep == 0) {  // untimed: every loaded key is there
                std::uint64_t loaded = 0;
                for (std::uint64_t k = 0; k < a.keys; ++k) loaded += m->get(key_of(k)).has_value();
                if (loaded != a.keys)
                    throw error("tree-kill: " + std::to_string(loaded) + " of " + std::to_string(a.keys) + " keys after the reopen");
            }
            m.reset();
            std::filesystem::remove(copy);
        }
    for (const int i : {0, 1})
        std::printf("median of %u, %s: store open %.2f ms, map open %.2f ms, first get %.3f ms, open-to-first-get %.2f ms\n",
                    a.reps, i == 1 ? "eager" : "lazy", median(store_open[i]), median(map_open[i]), median(first_get[i]),
                    median(total[i]));
    std::filesystem::remove(image);
    return 0;
}

}  // namespace

void register_tree_kill_command(CLI::App& app, const common_options& common, action& chosen) {
    auto a = std::make_shared<tree_kill_args>();
    auto* c = app.add_subcommand("tree-kill",
                                 "time an ordered_map's reopen after kill -9: store open, map open (recovery), first get; "
                                 "lazy and eager recovery alternated (docs/index.md)");
    c->add_option("--keys", a->keys, "keys the child loads (default 1000000)");
    c->add_option("--updates", a->updates, "updates after the sync, the last epoch unfinished (default keys / 10)");
    c->add_option("--reps", a->reps, "timed reopens per mode, each from a fresh copy of the crash image (default 5)");
    c->add_option("--pool", a->pool, "pool file name in --pool-dir (default ferrite-tree-kill; .image and .copy beside)");
    c->callback([&common, &chosen, a] { chosen = [&common, a] { return run(common, *a); }; });
}

}  // namespace ferrite::cli
