// Pool path resolution (see ferrite/pmem/pool_path.hpp).
#include "ferrite/pmem/pool_path.hpp"

#include <cstdlib>

namespace ferrite::pmem {

std::filesystem::path pool_directory() {
    if (const char* env = std::getenv(pool_dir_env); env && *env) return env;
    return default_pool_dir;
}

std::filesystem::path resolve_pool_path(const std::filesystem::path& p,
                                        const std::filesystem::path& pool_dir) {
    if (p.has_parent_path()) return p;
    return pool_dir / p;
}

}  // namespace ferrite::pmem
