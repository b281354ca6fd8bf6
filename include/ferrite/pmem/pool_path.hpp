// ferrite/pmem/pool_path.hpp: where pool files live.
//
// A pool argument that is a bare name ("orders") is looked up in the pool directory; one
// with a directory part ("./orders", "/mnt/pmem0/orders") is used as given. The pool
// directory is $FERRITE_POOL_DIR if set, else /dev/shm (tmpfs stands in for persistent
// memory on machines without it); every CLI command also takes --pool-dir.
#pragma once

#include <filesystem>

namespace ferrite::pmem {

inline constexpr const char* pool_dir_env = "FERRITE_POOL_DIR";
inline constexpr const char* default_pool_dir = "/dev/shm";

std::filesystem::path pool_directory();
std::filesystem::path resolve_pool_path(const std::filesystem::path& name_or_path,
                                        const std::filesystem::path& pool_dir = pool_directory());

}  // namespace ferrite::pmem
