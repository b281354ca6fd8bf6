// The soft engine (apps/kv/soft_engine.hpp) without a server: damaged pools are refused with
// the file left as it was (a kv root that lost its magic, an index lost with the catalog: not
// formatted or rebuilt empty over the items), including when the store's or the index's
// recovery would have written first, and damage in the item heap is refused at open, not met
// by a later store. (The pool fuzz test, tests/fuzz, found the last three.)
#include "soft_engine.hpp"
#include "pool_file.hpp"

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/error.hpp"
#include "ferrite/pmem/pool.hpp"

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
  std::vector<char> bytes() const { return ferrite::kv::test::pool_bytes(path_); }
  void overwrite(const std::vector<char>& content) const { ferrite::kv::test::overwrite_pool(path_, content); }
  // Opening must throw damaged_pool whose message says `what`, and leave the file as it was.
  void expect_refused_unchanged(const std::string& what) const {
    ferrite::kv::test::expect_refused_unchanged<soft_engine>(options(), what);
  }
  std::filesystem::path path_;
};

store_outcome set(soft_engine& e, std::string_view key, std::string_view value) {
  store_request r;
  r.key = key;
  r.value = value;
  return e.store(r, unix_now());
}

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

// The pool as kill -9 leaves it (copied while the engine is open), with one byte of an item's
// key changed: the item's checksum no longer matches. Before the open was rehearsed, the store
// recovered the index (rewriting its nodes) and marked the crashed pool clean, and only then
// did the engine find the damaged item: the refused file had changed.
TEST_F(SoftEngineTest, ADamagedItemInAKilledPoolIsRefusedWithTheFileUnchanged) {
  std::vector<char> killed;
  {
    soft_engine e(options());
    ASSERT_EQ(set(e, "victim-key-0123456789", "value").result, store_result::stored);
    ASSERT_EQ(set(e, "other", "line one\r\nline two").result, store_result::stored);
    killed = bytes();
  }
  const std::string key = "victim-key-0123456789";
  const auto at = std::search(killed.begin(), killed.end(), key.begin(), key.end());
  ASSERT_NE(at, killed.end());
  at[3] = 'X';
  overwrite(killed);
  expect_refused_unchanged("checksum mismatch");
}

// A free block's link in the item heap pointing far outside it. The heap checks links only
// when it hands a block out or merges it, so the open used to succeed and a later store or
// delete failed; the rehearsed open ends with the item heap's whole check.
TEST_F(SoftEngineTest, DamageInTheItemHeapsFreeListsIsRefusedAtOpen) {
  {
    soft_engine e(options());
    ASSERT_EQ(set(e, "kept", "value").result, store_result::stored);
  }
  std::uint64_t link_at = 0;
  {
    auto p = ferrite::pmem::pool::inspect(path_);
    std::uint64_t heap_at = 0;  // the kv root's heap_offset word, after magic, version, seeds
    std::memcpy(&heap_at, p.base() + p.state().root_offset + 32, 8);
    auto heap = ferrite::alloc::buddy_heap::open(p, heap_at);
    for (const auto& b : heap.blocks()) {
      if (b.state == ferrite::alloc::block_state::free) {
        link_at = heap_at + b.offset;
        break;
      }
    }
  }
  ASSERT_NE(link_at, 0u);
  auto content = bytes();
  const std::uint64_t far = std::uint64_t{1} << 62;
  std::memcpy(content.data() + link_at, &far, 8);
  overwrite(content);
  expect_refused_unchanged("the item heap");
}

// The pool header's roots entry of the catalog with its id damaged: the store then takes its
// setup for unfinished and makes a new, empty catalog. The engine used to create a new empty
// index in it and free every item as a leftover; now an item heap that holds items with no
// index is damage.
TEST_F(SoftEngineTest, AnIndexLostWithTheCatalogIsRefusedNotRebuiltEmpty) {
  {
    soft_engine e(options());
    ASSERT_EQ(set(e, "kept", "value").result, store_result::stored);
  }
  auto content = bytes();
  bool found = false;
  for (std::size_t at = 320; at < 384; at += 8) {  // the roots table: id in the top 16 bits
    std::uint64_t w = 0;
    std::memcpy(&w, content.data() + at, 8);
    if ((w >> 48) != 2) continue;  // root_ids::catalog
    w = (w & ((std::uint64_t{1} << 48) - 1)) | (std::uint64_t{0x79} << 48);
    std::memcpy(content.data() + at, &w, 8);
    found = true;
  }
  ASSERT_TRUE(found);
  overwrite(content);
  expect_refused_unchanged("no index");
}

}  // namespace
