// `ferrite`: command-line front end of the library. Subcommands live in *_command(s).cpp.
// Exit status: 0 success, 1 the operation failed (one line on stderr says why), 2 bad usage.
#include <cstdio>
#include <exception>
#include <string>

#include "commands.hpp"
#include "ferrite/error.hpp"
#include "ferrite/pmem/backend.hpp"
#include "ferrite/pmem/pool_path.hpp"

namespace ferrite::cli {

std::filesystem::path common_options::resolve(const std::string& name_or_path) const {
    return pmem::resolve_pool_path(name_or_path,
                                   pool_dir.empty() ? pmem::pool_directory()
                                                   : std::filesystem::path(pool_dir));
}

}  // namespace ferrite::cli

int main(int argc, char** argv) {
    using namespace ferrite::cli;
    CLI::App app{"ferrite: crash-consistent concurrent data structures for persistent memory.\n"
                 "Pools are files; a bare pool name lives in $FERRITE_POOL_DIR (default /dev/shm)."};
    app.require_subcommand(1);
    app.fallthrough();
    common_options common;
    app.add_option("--pool-dir", common.pool_dir,
                   "directory for bare pool names (default: $FERRITE_POOL_DIR or /dev/shm)");
    app.add_option("--backend", common.backend,
                   "persistence backend: clwb, clflushopt, clflush, none, emulated (default: best "
                   "the CPU has)");
    action chosen;
    register_pool_commands(app, common, chosen);
    register_demo_command(app, common, chosen);
    register_crashtest_command(app, common, chosen);
    register_bench_command(app, common, chosen);
    register_tree_kill_command(app, common, chosen);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return 2;
    }
    try {
        if (!common.backend.empty()) {
            auto b = ferrite::pmem::backend_from_string(common.backend);
            if (!b) {
                std::fprintf(stderr, "ferrite: error: unknown backend '%s' (clwb, clflushopt, "
                                     "clflush, none, emulated)\n", common.backend.c_str());
                return 2;
            }
            ferrite::pmem::set_backend(*b);
        }
        return chosen ? chosen() : 2;
    } catch (const ferrite::usage_error& e) {
        std::fprintf(stderr, "ferrite: error: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ferrite: error: %s\n", e.what());
        return 1;
    }
}
