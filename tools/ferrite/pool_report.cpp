#include "pool_report.hpp"

#include <cstdio>
#include <map>
#include <sstream>
#include <utility>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/containers/catalog.hpp"
#include "ferrite/pmem/backend.hpp"
#include "ferrite/pmem/counters.hpp"

namespace ferrite::cli {

nlohmann::json heap_json(const pmem::pool& p, const alloc::buddy_heap& heap) {
    const auto u = heap.usage();
    nlohmann::json orders = nlohmann::json::array();
    for (unsigned k = u.min_order; k <= u.max_order; ++k)
        if (u.free_blocks[k] != 0 || u.live_blocks[k] != 0)
            orders.push_back({{"order", k},
                              {"block_bytes", std::uint64_t{1} << k},
                              {"free", u.free_blocks[k]},
                              {"live", u.live_blocks[k]}});
    return {{"offset", p.heap_offset()},
            {"arena_bytes", u.arena_bytes},
            {"bytes_free", u.bytes_free},
            {"bytes_used", u.bytes_used},
            {"largest_free", u.largest_free},
            {"fragmentation", u.fragmentation},
            {"pending_allocations", u.pending_allocations},
            {"pending_deallocations", u.pending_deallocations},
            {"orders", orders}};
}

// The named objects of the pool's catalog (the pool has a heap and a catalog).
nlohmann::json objects_json(pmem::pool& pool, alloc::buddy_heap& heap) {
    nlohmann::json out = nlohmann::json::array();
    const catalog names(pool, heap);
    // Each kind's own description (the registry's describe), or what is wrong with it:
    // `pool check` is the report of damage, so a directory it refuses leaves these out.
    std::map<std::string, std::string> details;
    try {
        for (const auto& c : names.check_objects())
            details[c.name] = c.problem.empty() ? c.detail : "damaged: " + c.problem;
    } catch (const std::exception&) {
    }
    for (const auto& o : names.list())
        out.push_back({{"name", o.name},
                       {"kind", o.kind},
                       {"element_size", o.element_size},
                       {"element_align", o.element_align},
                       {"created", o.created},
                       {"detail", details[o.name]}});
    return out;
}

nlohmann::json pool_info_json(const pmem::pool& p) {
    const auto& id = p.identity();
    const auto& st = p.state();
    const auto c = pmem::thread_counters();
    nlohmann::json j;
    j["schema"] = "ferrite.pool-info/1";
    j["path"] = p.path().string();
    j["layout"] = std::string(p.layout());
    j["uuid"] = id.uuid_string();
    j["format_version"] = id.version;
    j["created_unix_ns"] = id.created_unix_ns;
    j["size"] = p.size();
    j["used"] = p.used();
    j["free"] = p.size() - p.used();
    j["granularity"] = std::string(pmem::to_string(p.granularity()));
    j["dax"] = p.is_dax();
    // A pool opened by `pool info` is opened read-only: this is the flag as stored.
    j["clean_shutdown"] = st.clean_shutdown == 1;
    j["root"] = st.root_offset == 0
                    ? nlohmann::json(nullptr)
                    : nlohmann::json{{"offset", st.root_offset}, {"size", st.root_size}};
    // The roots table as stored (validated by the open): one entry per registered root.
    j["roots"] = nlohmann::json::array();
    for (const std::uint64_t e : p.roots().entries) {
        if (e == 0) continue;
        const auto rid = pmem::root_entry_id(e);
        j["roots"].push_back({{"id", rid},
                              {"name", rid == pmem::root_ids::heap      ? nlohmann::json("heap")
                                       : rid == pmem::root_ids::catalog ? nlohmann::json("catalog")
                                                                        : nlohmann::json(nullptr)},
                              {"offset", pmem::root_entry_offset(e)}});
    }
    j["heap"] = j["objects"] = nullptr;
    if (p.heap_offset() != 0) {
        // The pool is open read-only: opening its heap and an existing catalog only reads.
        auto& pool = const_cast<pmem::pool&>(p);
        auto heap = alloc::buddy_heap::open(pool, p.heap_offset());
        j["heap"] = heap_json(p, heap);
        if (p.catalog_offset() != 0) j["objects"] = objects_json(pool, heap);
    }
    j["persistence"] = {
        {"backend", std::string(pmem::to_string(pmem::current_backend()))},
        {"backend_reason", pmem::backend_reason()},
        {"counters",
         {{"pwb_lines", c.pwb_lines},
          {"pfences", c.pfences},
          {"psyncs", c.psyncs},
          {"nt_stores", c.nt_stores}}}};
    return j;
}

std::string pool_info_text(const nlohmann::json& j) {
    std::ostringstream o;
    auto kib = [](std::uint64_t b) { return std::to_string(b / 1024) + " KiB"; };
    o << "pool            " << j["path"].get<std::string>() << '\n'
      << "layout          " << j["layout"].get<std::string>() << '\n'
      << "uuid            " << j["uuid"].get<std::string>() << '\n'
      << "format version  " << j["format_version"].get<unsigned>() << '\n'
      << "size            " << kib(j["size"]) << " (" << j["size"].get<std::uint64_t>() << " bytes)\n"
      << "used            " << kib(j["used"]) << " (" << j["used"].get<std::uint64_t>() << " bytes)\n"
      << "granularity     " << j["granularity"].get<std::string>()
      << " (as libpmem2 reports it)\n"
      << "DAX             " << (j["dax"].get<bool>() ? "yes" : "no (page cache or tmpfs)") << '\n'
      << "clean shutdown  " << (j["clean_shutdown"].get<bool>() ? "yes" : "no (open, or crashed)") << '\n'
      << "root object     "
      << (j["root"].is_null() ? std::string("none")
                              : std::to_string(j["root"]["size"].get<std::uint64_t>()) + " bytes at offset " +
                                    std::to_string(j["root"]["offset"].get<std::uint64_t>()))
      << '\n';
    o << "roots           ";  // the header's roots table
    if (j["roots"].empty()) o << "none";
    const char* sep = "";
    for (const auto& r : j["roots"])
        o << std::exchange(sep, ", ")
          << (r["name"].is_null() ? "id " + std::to_string(r["id"].get<unsigned>()) : r["name"].get<std::string>())
          << " at offset " << r["offset"].get<std::uint64_t>();
    o << '\n';
    if (!j["heap"].is_null()) {
        const auto& h = j["heap"];
        char frag[32];
        std::snprintf(frag, sizeof frag, "%.1f%%", 100 * h["fragmentation"].get<double>());
        o << "heap            " << kib(h["bytes_used"]) << " used of " << kib(h["arena_bytes"])
          << ", largest free block " << kib(h["largest_free"]) << ", fragmentation " << frag << ", "
          << h["pending_allocations"].get<std::uint64_t>() << " allocations and "
          << h["pending_deallocations"].get<std::uint64_t>() << " deallocations unconfirmed\n";
        for (const auto& k : h["orders"])
            o << "  order " << k["order"].get<unsigned>() << " (" << k["block_bytes"].get<std::uint64_t>()
              << " B)  free " << k["free"].get<std::uint64_t>() << "  live " << k["live"].get<std::uint64_t>() << '\n';
    }
    if (!j["objects"].is_null()) {
        o << "named objects   " << j["objects"].size() << '\n';
        for (const auto& x : j["objects"])
            o << "  " << x["name"].get<std::string>() << "  " << x["kind"].get<std::string>() << " of "
              << x["element_size"].get<std::uint64_t>() << "-byte elements"
              << (x["created"].get<bool>() ? " (" + x["detail"].get<std::string>() + ")"
                                           : " (named, creation interrupted by a crash)")
              << '\n';
    }
    const auto& c = j["persistence"]["counters"];
    o << "backend         " << j["persistence"]["backend"].get<std::string>() << " ("
      << j["persistence"]["backend_reason"].get<std::string>() << ")\n"
      << "this process    " << c["pwb_lines"].get<std::uint64_t>() << " pwb lines, "
      << c["pfences"].get<std::uint64_t>() << " pfences, " << c["psyncs"].get<std::uint64_t>()
      << " psyncs, " << c["nt_stores"].get<std::uint64_t>() << " NT stores\n";
    return o.str();
}

}  // namespace ferrite::cli
