// Registry of crash-test targets (see ferrite/sim/target.hpp).
#include "ferrite/sim/target.hpp"

#include <algorithm>

#include "ferrite/error.hpp"

namespace ferrite::sim {

void target_registry::add(std::unique_ptr<target> t) {
    if (find(t->name()) != nullptr)
        throw usage_error("crash target '" + std::string(t->name()) + "' is registered twice");
    targets_.push_back(std::move(t));
}

const target* target_registry::find(std::string_view name) const noexcept {
    for (const auto& t : targets_)
        if (t->name() == name) return t.get();
    return nullptr;
}

std::vector<const target*> target_registry::all() const {
    std::vector<const target*> out;
    for (const auto& t : targets_) out.push_back(t.get());
    std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->name() < b->name(); });
    return out;
}

}  // namespace ferrite::sim
