// The soft engine (apps/kv/soft_engine.hpp) without a server: a pool whose kv root lost its
// magic is refused, not formatted again over its items, and the file is left as it was.
#include "soft_engine.hpp"

#include "ferrite/error.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

using namespace ferrite::kv;

class SoftEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = "/dev/shm/ferrite-kv-soft-test-" + std::to_string(::getpid());
    std::filesystem::remove(path_);
  }
  void TearDown() override { std::filesystem::remove(path_); }
  soft_engine_options options() const {
    soft_engine_options o;
    o.pool = path_;
    o.size = 32u << 20;
    return o;
  }
  std::vector<char> bytes() const {
    std::ifstream in(path_, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  std::filesystem::path path_;
};

TEST_F(SoftEngineTest, ARootWhoseMagicIsLostIsRefusedNotFormattedAgain) {
  {
    soft_engine e(options());
    store_request r;
    r.key = "kept";
    r.value = "value";
    ASSERT_EQ(e.store(r, unix_now()).result, store_result::stored);
  }
  auto content = bytes();
  const std::string magic = "FKVROOT1";
  const auto at = std::search(content.begin(), content.end(), magic.begin(), magic.end());
  ASSERT_NE(at, content.end());
  std::fill(at, at + 8, '\0');
  {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
  }
  EXPECT_THROW(soft_engine e(options()), ferrite::damaged_pool);
  EXPECT_EQ(bytes(), content) << "a refused open writes nothing";
}

}  // namespace
