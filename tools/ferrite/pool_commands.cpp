// `ferrite pool create | info | check`.
#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include <filesystem>
#include <optional>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/containers/catalog.hpp"
#include "ferrite/error.hpp"
#include "ferrite/pmem/pool.hpp"
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
    auto p = pmem::pool::create(common.resolve(a.path), a.layout, *bytes);
    if (heap_bytes) {
        try {
            p.root_bytes(*heap_bytes);
            alloc::buddy_heap::create(p, p.state().root_offset, *heap_bytes);
        } catch (...) {
            const auto path = p.path();
            p.close();
            std::filesystem::remove(path);  // never leave a half-made pool behind
            throw;
        }
    }
    std::printf("created %s (%llu bytes, layout %s%s)\n", p.path().c_str(),
                static_cast<unsigned long long>(p.size()), std::string(p.layout()).c_str(),
                heap_bytes ? (", heap of " + a.heap + " as its root").c_str() : "");
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
    // Opening validates magic, version, checksum, sizes and the root bounds; structure
    // checkers join here as structures arrive.
    auto p = pmem::pool::inspect(common.resolve(a.path));
    std::string heap_note;
    if (p.heap_offset() != 0) {
        auto heap = alloc::buddy_heap::open(p, p.heap_offset());
        const auto problems = heap.check();
        for (const auto& problem : problems) std::printf("%s: heap: %s\n", p.path().c_str(), problem.c_str());
        if (!problems.empty())
            throw error("pool '" + p.path().string() + "': its heap has " + std::to_string(problems.size()) +
                        " problem(s), listed above; restore the pool from a backup");
        heap_note = ", heap consistent";
        if (p.catalog_offset() != 0) {  // walks and validates the catalog's chain of blocks
            const auto names = catalog(p, heap).list();
            heap_note += ", catalog of " + std::to_string(names.size()) + " named object(s) readable";
        }
    }
    std::printf("%s: consistent (header valid, layout %s, %s%s)\n", p.path().c_str(),
                std::string(p.layout()).c_str(),
                p.state().clean_shutdown == 1 ? "clean shutdown" : "not shut down cleanly", heap_note.c_str());
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
    k->callback([&] { chosen = [&] { return check(common, args); }; });
}

}  // namespace ferrite::cli
