// `ferrite pool create | info | check`.
#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include <filesystem>
#include <optional>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/containers/catalog.hpp"
#include "ferrite/containers/store.hpp"
#include "ferrite/error.hpp"
#include "ferrite/pmem/pool.hpp"
#include "pool_check.hpp"
#include "pool_report.hpp"
#include "size_arg.hpp"

namespace ferrite::cli {
namespace {

struct pool_args {
    std::string path;
    std::string size = "64M";
    std::string layout = "ferrite";
    std::string heap;  // create: carve a buddy heap of this size from the pool as its root
    bool json = false;
};

int create(const common_options& common, const pool_args& a) {
    auto bytes = parse_size(a.size);
    if (!bytes)
        throw usage_error("--size '" + a.size + "' is not a size (examples: 65536, 64K, 256M, 2G)");
    std::optional<std::uint64_t> heap_bytes;
    if (!a.heap.empty() && !(heap_bytes = parse_size(a.heap)))
        throw usage_error("--heap '" + a.heap + "' is not a size (examples: 1M, 32M)");
    // With --heap: a store (profile, root, heap, catalog), all written before the file is
    // named, so a kill at any instant leaves no file or a complete one.
    const auto initialise = [&](pmem::pool& p) {
        if (!heap_bytes) return;
        store_options o;
        o.heap_size = *heap_bytes;
        store::initialise(p, o);
    };
    auto p = pmem::pool::create(common.resolve(a.path), a.layout, *bytes, initialise);
    std::printf("created %s (%llu bytes, layout %s%s)\n", p.path().c_str(),
                static_cast<unsigned long long>(p.size()), std::string(p.layout()).c_str(),
                heap_bytes ? (", heap of " + a.heap + " as its root, empty catalog").c_str() : "");
    return 0;
}

int info(const common_options& common, const pool_args& a) {
    auto p = pmem::pool::inspect(common.resolve(a.path));
    auto j = pool_info_json(p);
    if (a.json)
        std::cout << j.dump(2) << '\n';
    else
        std::cout << pool_info_text(j);
    return 0;
}

int check(const common_options& common, const pool_args& a) {
    auto p = pmem::pool::inspect(common.resolve(a.path));  // header: magic, version, checksum, state
    const auto j = pool_check_json(p);
    if (a.json)
        std::cout << j.dump(2) << '\n';
    else
        std::cout << pool_check_text(j);
    if (!j["consistent"].get<bool>())
        throw error("pool '" + p.path().string() + "' is not consistent: " +
                    printable(j["problems"][0].get<std::string>()) +
                    (j["problems"].size() > 1 ? " (" + std::to_string(j["problems"].size()) + " problems, listed above); "
                                              : "; ") +
                    (j["unfinished"].get<bool>() ? "ferrite::store finishes an unfinished initialisation on its next open"
                                                 : "restore the pool from a backup"));
    return 0;
}

}  // namespace

void register_pool_commands(CLI::App& app, const common_options& common, action& chosen) {
    auto* pool = app.add_subcommand("pool", "create and inspect pool files");
    pool->require_subcommand(1);
    static pool_args args;  // lives as long as the parse; one subcommand runs per process

    auto* c = pool->add_subcommand("create", "create a new pool file (never overwrites)");
    c->add_option("PATH", args.path, "pool name or path")->required();
    c->add_option("--size", args.size, "pool size, with K/M/G/T suffix (default 64M)");
    c->add_option("--layout", args.layout, "layout name stored in the header (default ferrite)");
    c->add_option("--heap", args.heap, "format a buddy heap of this size as the pool's root (K/M/G)");
    c->callback([&] { chosen = [&] { return create(common, args); }; });

    auto* i = pool->add_subcommand("info", "print a pool's header, usage and persistence info");
    i->add_option("PATH", args.path, "pool name or path")->required();
    i->add_flag("--json", args.json, "machine-readable output (schema ferrite.pool-info/1)");
    i->callback([&] { chosen = [&] { return info(common, args); }; });

    auto* k = pool->add_subcommand("check", "validate a pool; exit 0 if consistent");
    k->add_option("PATH", args.path, "pool name or path")->required();
    k->add_flag("--json", args.json, "machine-readable output (schema ferrite.pool-check/1)");
    k->callback([&] { chosen = [&] { return check(common, args); }; });
}

}  // namespace ferrite::cli
