#include "open_rehearsal.hpp"

#include "ferrite/containers/store.hpp"

namespace ferrite::kv {

namespace {

alloc::buddy_heap finished_heap(pmem::pool& copy) {
  if (setup_unfinished(copy)) store::initialise(copy, {});  // as store::open does
  return alloc::buddy_heap::open(copy, copy.heap_offset());
}

catalog recovered_catalog(pmem::pool& copy, alloc::buddy_heap& heap) {
  catalog::recover_pool(copy, heap);
  return catalog(copy, heap);
}

}  // namespace

rehearsal_copy::rehearsal_copy(pmem::pool unmarked)
    : file(std::move(unmarked)), pool(file.private_copy()), heap(finished_heap(pool)), names(recovered_catalog(pool, heap)) {}

std::unique_ptr<rehearsal_copy> open_rehearsal_copy(const std::filesystem::path& path, std::string_view layout) {
  pmem::pool file;
  try {
    file = pmem::pool::open_unmarked(path, layout);  // writes nothing; closes without writing
  } catch (const pool_error& e) {
    if (e.kind() == pool_errc::not_found) return nullptr;
    throw;
  }
  if (file.heap_offset() == 0 && !setup_unfinished(file)) return nullptr;
  return std::make_unique<rehearsal_copy>(std::move(file));
}

}  // namespace ferrite::kv
