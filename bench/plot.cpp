// bench/plot.cpp: writes the CSV of a run and runs bench/plot.py on it (see plot.hpp).
#include "bench/plot.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <fstream>
#include <system_error>

#include "ferrite/error.hpp"

extern char** environ;

namespace ferrite::bench {
namespace {

constexpr int exit_no_matplotlib = 3;  // plot.py's exit status when matplotlib is missing

constexpr int exit_not_found = 127;

// Runs argv, returns its exit status (exit_not_found if it could not be started).
int run_program(std::vector<std::string> argv) {
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    pid_t pid = 0;
    if (::posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0) return exit_not_found;
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) throw error(std::string("waitpid: ") + std::strerror(errno));
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

std::filesystem::path plot_script() {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (const char* env = std::getenv("FERRITE_BENCH_PLOT_SCRIPT"); env && *env) return env;
#ifdef FERRITE_BENCH_PLOT_SCRIPT
    if (fs::is_regular_file(FERRITE_BENCH_PLOT_SCRIPT, ec)) return FERRITE_BENCH_PLOT_SCRIPT;
#endif
    const auto exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const auto installed = exe.parent_path().parent_path() / "share" / "ferrite" / "plot.py";
        if (fs::is_regular_file(installed, ec)) return installed;
    }
    return {};
}

std::vector<std::filesystem::path> write_plots(const std::filesystem::path& dir, const std::string& csv) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw error("--plot: cannot create " + dir.string() + ": " + ec.message());
    const auto csv_path = dir / "bench.csv";
    {
        std::ofstream out(csv_path);
        out << csv;
        if (!out) throw error("--plot: cannot write " + csv_path.string());
    }
    const auto script = plot_script();
    if (script.empty())
        throw error("--plot: bench/plot.py not found (set FERRITE_BENCH_PLOT_SCRIPT); the CSV is at " +
                    csv_path.string());
    // $FERRITE_BENCH_PYTHON, else python3 on the PATH; if that one lacks matplotlib (a pyenv
    // or venv interpreter shadowing the system's), Debian's /usr/bin/python3, where
    // python3-matplotlib installs it.
    std::vector<std::string> interpreters;
    if (const char* py = std::getenv("FERRITE_BENCH_PYTHON"); py && *py)
        interpreters.emplace_back(py);
    else
        interpreters = {"python3", "/usr/bin/python3"};
    int rc = exit_not_found;
    for (const auto& py : interpreters) {
        rc = run_program({py, script.string(), csv_path.string(), dir.string()});
        if (rc != exit_no_matplotlib && rc != exit_not_found) break;
    }
    if (rc == exit_not_found)
        throw error("--plot: python3 not found (install python3); the CSV is at " + csv_path.string());
    if (rc == exit_no_matplotlib)
        throw error("--plot: python3-matplotlib is not installed (scripts/install-deps.sh); the CSV is at " +
                    csv_path.string());
    if (rc != 0)
        throw error("--plot: " + script.string() + " failed (exit " + std::to_string(rc) +
                    "); the CSV is at " + csv_path.string());
    std::vector<fs::path> pngs;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.path().extension() == ".png") pngs.push_back(e.path());
    std::sort(pngs.begin(), pngs.end());
    return pngs;
}

}  // namespace ferrite::bench
