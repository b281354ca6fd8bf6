// `ferrite pool check`: see pool_check.hpp.
#include "pool_check.hpp"

#include <sstream>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/containers/catalog.hpp"
#include "ferrite/containers/store.hpp"
#include "ferrite/error.hpp"

namespace ferrite::cli {
namespace {

void add_heap_problems(nlohmann::json& problems, const alloc::buddy_heap& heap, const char* when) {
    for (const auto& problem : heap.check()) problems.push_back(std::string("heap") + when + ": " + problem);
}

}  // namespace

nlohmann::json pool_check_json(const pmem::pool& p) {
    nlohmann::json j;
    j["schema"] = "ferrite.pool-check/1";
    j["path"] = p.path().string();
    j["layout"] = std::string(p.layout());
    j["clean_shutdown"] = p.state().clean_shutdown == 1;
    j["profile"] = p.profile() == pmem::pool_profile::store ? "store" : "plain";
    j["heap"] = p.heap_offset() != 0;
    j["catalog"] = p.catalog_offset() != 0;
    j["unfinished"] = setup_unfinished(p);
    j["objects"] = nlohmann::json::array();
    auto& problems = j["problems"] = nlohmann::json::array();
    if (j["unfinished"].get<bool>())
        problems.push_back(
            "unfinished initialisation: the pool was made to hold a heap and a catalog, but its creation was "
            "interrupted before the " +
            std::string(p.heap_offset() == 0 ? "heap" : "catalog") + " was registered");
    if (p.heap_offset() != 0) {
        try {
            // As found: the heap's own structure (an interrupted operation is reported here and
            // rolled back by recovery below).
            const auto heap = alloc::buddy_heap::open(const_cast<pmem::pool&>(p), p.heap_offset());
            if (p.state().clean_shutdown == 1) add_heap_problems(problems, heap, "");
            // What every open does, rehearsed on a copy-on-write mapping: recovery of the heap,
            // the catalog and every named object, then every object's validation.
            auto copy = p.private_copy();
            auto recovered = alloc::buddy_heap::open(copy, copy.heap_offset());
            catalog::recover_pool(copy, recovered);
            add_heap_problems(problems, recovered, " after recovery");
            if (copy.catalog_offset() != 0) {
                catalog names(copy, recovered);
                for (const auto& c : names.check_objects()) {
                    j["objects"].push_back({{"name", c.name}, {"kind", c.kind}, {"ok", c.problem.empty()},
                                            {"problem", c.problem}, {"detail", c.detail}});
                    if (!c.problem.empty()) problems.push_back(c.problem);
                }
                names.validate();  // objects sharing a block
            }
        } catch (const std::exception& e) {
            problems.push_back(e.what());
        }
    }
    j["consistent"] = problems.empty();
    return j;
}

std::string pool_check_text(const nlohmann::json& j) {
    std::ostringstream o;
    const auto path = j["path"].get<std::string>();
    for (const auto& problem : j["problems"]) o << path << ": " << printable(problem.get<std::string>()) << '\n';
    if (!j["consistent"].get<bool>()) return o.str();
    o << path << ": consistent (header valid, layout " << j["layout"].get<std::string>() << ", "
      << (j["clean_shutdown"].get<bool>() ? "clean shutdown" : "not shut down cleanly: recovery rehearsed");
    if (j["heap"].get<bool>()) o << ", heap consistent";
    if (j["catalog"].get<bool>()) o << ", " << j["objects"].size() << " named object(s) valid";
    o << ")\n";
    for (const auto& x : j["objects"])
        o << "  " << printable(x["name"].get<std::string>()) << "  " << x["kind"].get<std::string>() << ": "
          << x["detail"].get<std::string>() << '\n';
    return o.str();
}

}  // namespace ferrite::cli
