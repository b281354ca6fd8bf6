// The `ferrite` command line: each file registers one group of subcommands.
// Subcommands resolve pool names against the options every command shares.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <string>

namespace ferrite::cli {

struct common_options {
    std::string pool_dir;  // --pool-dir; empty = $FERRITE_POOL_DIR or /dev/shm
    std::string backend;   // --backend; empty = detected

    std::filesystem::path resolve(const std::string& name_or_path) const;
};

// A subcommand's action returns the process exit status.
using action = std::function<int()>;

void register_pool_commands(CLI::App& app, const common_options& common, action& chosen);
void register_demo_command(CLI::App& app, const common_options& common, action& chosen);
void register_crashtest_command(CLI::App& app, const common_options& common, action& chosen);
void register_bench_command(CLI::App& app, const common_options& common, action& chosen);
void register_tree_kill_command(CLI::App& app, const common_options& common, action& chosen);

}  // namespace ferrite::cli
