// bench/registry.cpp: the list of built-in bench subjects (see registry.hpp).
#include "bench/registry.hpp"

#include "bench/baselines/baselines.hpp"
#include "bench/baselines/map_baselines.hpp"
#include "bench/baselines/set_baselines.hpp"
#include "bench/calibration/fence_floor.hpp"
#include "bench/containers/vector_subjects.hpp"
#include "bench/containers/pfc_subjects.hpp"
#include "bench/containers/dfc_subjects.hpp"
#include "bench/index/index_subjects.hpp"
#include "bench/sets/set_subjects.hpp"
#include "bench/trees/tree_subjects.hpp"

namespace ferrite::bench {

void register_builtin_subjects(std::vector<subject_kind>& out) {
    // ferrite's own structures (bench/containers/): one register_<group>_subjects(out) each.
    register_vector_subjects(out);
    register_pfc_subjects(out);
    register_dfc_subjects(out);
    register_set_subjects(out);  // keyed: the durable sets (bench/sets/)
    register_tree_subjects(out);  // keyed: the B+-trees of issue 19 (bench/trees/)
    register_index_subjects(out);  // keyed: the ordered index of issue 21 (bench/index/)
    // Calibration (bench/calibration/): the fence floor, the one-fence limit of a pass.
    register_fence_floor_subjects(out);
    // Baselines (bench/baselines/):
    register_pmdk_subjects(out);
    register_map_baselines(out);  // keyed: map-mutex, ordered-map-mutex
    register_set_baselines(out);  // keyed: logfree-list, logfree-hash, pmdk-hash
}

const std::vector<subject_kind>& subjects() {
    static const std::vector<subject_kind> all = [] {
        std::vector<subject_kind> v;
        register_builtin_subjects(v);
        return v;
    }();
    return all;
}

const subject_kind* find_subject(std::string_view name) {
    for (const auto& s : subjects())
        if (s.name == name) return &s;
    return nullptr;
}

}  // namespace ferrite::bench
