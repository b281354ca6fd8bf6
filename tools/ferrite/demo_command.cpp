// `ferrite demo`: the smallest end-to-end use of the library. Creates a pool, writes a
// record through the persistence primitives (NT stores for the payload, pwb + pfence for
// the commit flag), closes it, reopens it (possibly at another address), verifies the
// record through an offset pointer, and prints `pool info`. Removes the pool unless --keep.
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "ferrite/error.hpp"
#include "ferrite/pmem/offset_ptr.hpp"
#include "ferrite/pmem/pool.hpp"
#include "ferrite/pmem/primitives.hpp"
#include "pool_report.hpp"

namespace ferrite::cli {
namespace {

struct demo_root {
    std::array<std::uint64_t, 8> payload;   // persistent: written with NT stores
    pmem::offset_ptr<std::uint64_t> last;   // persistent: points into payload
    std::uint64_t committed;                // persistent: 1 once payload is durable
};

constexpr const char* demo_layout = "ferrite-demo";

int demo(const common_options& common, const std::string& name, bool keep, bool json) {
    const auto path = common.resolve(name.empty() ? "ferrite-demo-" + std::to_string(::getpid()) : name);
    {
        auto p = pmem::pool::create(path, demo_layout, 1 << 20);
        auto& r = p.root<demo_root>();
        for (std::size_t i = 0; i < r.payload.size(); ++i) pmem::nt_store(&r.payload[i], 1000 + i);
        r.last = &r.payload.back();
        pmem::pwb(&r.last);
        pmem::pfence();  // PP: payload and pointer durable before the flag
        r.committed = 1;
        pmem::pwb(&r.committed);
        pmem::pfence();
        std::printf("wrote 8 values with NT stores and a commit flag into %s at %p\n", path.c_str(),
                    static_cast<void*>(p.base()));
    }
    bool ok = false;
    {
        auto p = pmem::pool::open(path, demo_layout);
        const auto& r = p.root<demo_root>();
        ok = r.committed == 1 && r.last.get() == &r.payload.back() && *r.last == 1007;
        for (std::size_t i = 0; i < r.payload.size(); ++i) ok = ok && r.payload[i] == 1000 + i;
        std::printf("reopened at %p: record %s (last value via offset pointer: %llu)\n\n",
                    static_cast<void*>(p.base()), ok ? "intact" : "DAMAGED",
                    static_cast<unsigned long long>(r.last ? *r.last : 0));
    }
    {
        auto p = pmem::pool::inspect(path);
        auto j = pool_info_json(p);
        if (json)
            std::cout << j.dump(2) << '\n';
        else
            std::cout << pool_info_text(j);
    }
    if (!keep) std::filesystem::remove(path);
    return ok ? 0 : 1;
}

}  // namespace

void register_demo_command(CLI::App& app, const common_options& common, action& chosen) {
    static std::string name;
    static bool keep = false, json = false;
    auto* d = app.add_subcommand("demo", "create a pool, write through the primitives, reopen, "
                                         "verify and print pool info");
    d->add_option("--pool", name, "pool name or path (default: ferrite-demo-PID in the pool dir)");
    d->add_flag("--keep", keep, "keep the pool file afterwards");
    d->add_flag("--json", json, "print pool info as JSON");
    d->callback([&] { chosen = [&] { return demo(common, name, keep, json); }; });
}

}  // namespace ferrite::cli
