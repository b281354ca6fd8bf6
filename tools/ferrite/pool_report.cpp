#include "pool_report.hpp"

#include <sstream>

#include "ferrite/pmem/backend.hpp"
#include "ferrite/pmem/counters.hpp"

namespace ferrite::cli {

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
    j["persistence"] = {
        {"backend", std::string(pmem::to_string(pmem::current_backend()))},
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
    const auto& c = j["persistence"]["counters"];
    o << "backend         " << j["persistence"]["backend"].get<std::string>() << '\n'
      << "this process    " << c["pwb_lines"].get<std::uint64_t>() << " pwb lines, "
      << c["pfences"].get<std::uint64_t>() << " pfences, " << c["psyncs"].get<std::uint64_t>()
      << " psyncs, " << c["nt_stores"].get<std::uint64_t>() << " NT stores\n";
    return o.str();
}

}  // namespace ferrite::cli
