// The pool file of a kv engine test: read and rewritten whole, and the check every damage
// test makes (the open refused with damaged_pool and the restore advice, the file unchanged).
// Shared by soft_engine_test.cpp and cpnvm_engine_test.cpp.
#pragma once

#include "ferrite/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace ferrite::kv::test {

// In one read: a char-by-char copy of a pool takes seconds under ASan.
inline std::vector<char> pool_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  std::vector<char> out(static_cast<std::size_t>(std::max<std::streamoff>(in.tellg(), 0)));
  in.seekg(0);
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  return out;
}

inline void overwrite_pool(const std::filesystem::path& path, const std::vector<char>& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
}

// Opening an Engine with `options` must throw damaged_pool whose message says `what`, and
// leave the file at options.pool as it was.
template <class Engine, class Options>
void expect_refused_unchanged(const Options& options, const std::string& what) {
  const auto before = pool_bytes(options.pool);
  try {
    Engine e(options);
    ADD_FAILURE() << "opened a damaged pool";
  } catch (const ferrite::damaged_pool& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("restore the pool"), std::string::npos) << e.what();
  }
  EXPECT_EQ(pool_bytes(options.pool), before) << "a refused open writes nothing";
}

}  // namespace ferrite::kv::test
