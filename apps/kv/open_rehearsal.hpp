// A durable engine's open, rehearsed first on a copy-on-write mapping of its pool file.
//
// The store's open writes before an engine can check what it reads (it recovers the catalog
// and the objects of a crashed pool, marks the pool in use, and marks a recovered pool clean
// when it closes), and so does the engine's own start. So an engine runs all of it first on
// a private copy of the file, recovered here exactly as store::open recovers it (a store
// whose setup looks unfinished is finished, the catalog recovered): damage found there is
// refused before the real open writes anything. Both kv engines (soft_engine.cpp,
// cpnvm_engine.cpp) use it.
#pragma once

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/containers/catalog.hpp"
#include "ferrite/error.hpp"
#include "ferrite/pmem/pool.hpp"

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace ferrite::kv {

// A private copy of a store's pool file, recovered as store::open recovers it. Writes to it
// never reach the file.
struct rehearsal_copy {
  explicit rehearsal_copy(pmem::pool file);
  pmem::pool file;  // open without a mark; the copy maps its descriptor, so it lives as long
  pmem::pool pool;  // the private copy
  alloc::buddy_heap heap;
  catalog names;
};

// The copy of the store at `path` (layout `layout`); nullptr when there is nothing to
// rehearse: no file, or a blank one or one that is not a store (the real open decides).
std::unique_ptr<rehearsal_copy> open_rehearsal_copy(const std::filesystem::path& path, std::string_view layout);

// Runs rehearse(); a damaged_pool it throws is thrown again with the advice every refused
// open gives ("nothing was changed: restore the pool from a copy"), unless it has it already.
template <class Rehearse>
auto with_restore_advice(Rehearse&& rehearse) -> decltype(rehearse()) {
  try {
    return rehearse();
  } catch (const damaged_pool& e) {
    if (std::string_view(e.what()).find("restore the pool") != std::string_view::npos) throw;
    throw damaged_pool(e.kind(), e.region(), e.object(),
                       std::string(e.what()).append("; nothing was changed: restore the pool from a copy"));
  }
}

}  // namespace ferrite::kv
