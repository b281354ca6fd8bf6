// Site ids and per-site statistics (see ferrite/sim/site_registry.hpp).
#include "ferrite/sim/site_registry.hpp"

#include <algorithm>
#include <array>
#include <functional>

namespace ferrite::sim {

std::string_view to_string(site_kind k) noexcept {
    switch (k) {
        case site_kind::pwb: return "pwb";
        case site_kind::pfence: return "pfence";
        case site_kind::psync: return "psync";
        case site_kind::nt_store: return "nt_store";
    }
    return "?";
}

std::string site_registry::id_of(const pmem::site& where) {
    std::string_view file = where.file_name();
    std::size_t cut = std::string_view::npos;
    for (std::string_view root : std::array<std::string_view, 6>{"include/", "src/", "tests/", "tools/", "crash/", "apps/"}) {
        auto pos = file.rfind(root);
        if (pos != std::string_view::npos && (pos == 0 || file[pos - 1] == '/') &&
            (cut == std::string_view::npos || pos > cut))
            cut = pos;
    }
    if (cut == std::string_view::npos) {
        auto slash = file.rfind('/');
        cut = slash == std::string_view::npos ? 0 : slash + 1;
    }
    return std::string(file.substr(cut)) + ':' + std::to_string(where.line()) + ':' +
           std::to_string(where.column());
}

std::size_t site_registry::key_hash::operator()(const key& k) const noexcept {
    auto h = std::hash<const void*>{}(k.file);
    h ^= (std::size_t{k.line} << 20) ^ (std::size_t{k.column} << 4) ^ static_cast<std::size_t>(k.kind);
    return h;
}

site_registry::site_id site_registry::intern(const pmem::site& where, site_kind kind) {
    const key k{where.file_name(), where.line(), where.column(), kind};
    std::lock_guard lock(mutex_);
    if (auto it = ids_.find(k); it != ids_.end()) return it->second;
    const auto id = static_cast<site_id>(sites_.size());
    site_report r;
    r.id = id_of(where);
    r.function = where.function_name();
    r.kind = kind;
    sites_.push_back(std::move(r));
    disabled_flags_.push_back(disabled_ids_.contains(sites_.back().id) ? 1 : 0);
    ids_.emplace(k, id);
    return id;
}

void site_registry::count_call(site_id id) noexcept {
    std::lock_guard lock(mutex_);
    ++sites_[id].calls;
}

void site_registry::count_redundant_flush(site_id id) noexcept {
    std::lock_guard lock(mutex_);
    ++sites_[id].redundant_flushes;
}

void site_registry::count_empty_fence(site_id id) noexcept {
    std::lock_guard lock(mutex_);
    ++sites_[id].empty_fences;
}

void site_registry::disable(const std::string& id) {
    std::lock_guard lock(mutex_);
    disabled_ids_.insert(id);
    for (std::size_t i = 0; i < sites_.size(); ++i)
        if (sites_[i].id == id) disabled_flags_[i] = 1;
}

bool site_registry::disabled(site_id id) const noexcept {
    std::lock_guard lock(mutex_);
    return disabled_flags_[id] != 0;
}

std::vector<site_report> site_registry::report() const {
    std::lock_guard lock(mutex_);
    auto out = sites_;
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    return out;
}

}  // namespace ferrite::sim
