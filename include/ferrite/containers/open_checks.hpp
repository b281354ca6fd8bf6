// ferrite/containers/open_checks.hpp: what a combining container's open() checks before it
// hands out a handle whose operations change the structure.
//
// Two mistakes would otherwise surface late and badly: a pool opened read-only
// (pool::inspect) would take the first push as a store into a read-only mapping (SIGSEGV),
// and a heap opened after a restart but not recovered refuses every allocation, so every
// push that must grow would answer "full" as if the heap were exhausted. Both throw
// usage_error here, before anything is written.
#pragma once

#include <string>
#include <string_view>

#include "ferrite/error.hpp"
#include "ferrite/pmem/pool.hpp"

namespace ferrite::containers {

template <class Heap>
void require_changeable(const pmem::pool_ref& pool, const Heap& heap, std::string_view what) {
    if (pool.read_only())
        throw usage_error(std::string(what) + ": '" + pool.path().string() +
                          "' is open read-only (pool::inspect); open it with pool::open to change it");
    if constexpr (requires { heap.needs_recovery(); }) {
        if (heap.needs_recovery())
            throw usage_error(std::string(what) + ": the heap of '" + pool.path().string() +
                              "' was opened but not recovered, so it can give no memory; call its "
                              "recover(), then each structure's recover(), then its finish_recovery() "
                              "(catalog::recover_pool does all three for a pool's named objects)");
    }
}

}  // namespace ferrite::containers
