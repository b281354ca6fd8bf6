// Pools of an older on-media format (pool_header.hpp's format history): a version-1 pool,
// whose heap and catalog offsets were header words of their own, is refused by every open
// with pool_error(wrong_version) and a message naming both versions, and the file is left
// byte-identical: this ferrite never misreads it and never upgrades it.
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "ferrite/error.hpp"
#include "ferrite/pmem/pool.hpp"
#include "ferrite/pmem/pool_header.hpp"
#include "test_support.hpp"

namespace pm = ferrite::pmem;
namespace fs = std::filesystem;
using ferrite::pool_errc;
using ferrite_test::read_file;
using ferrite_test::write_file;

namespace {

// The header of format version 1, as ferrite wrote it before the roots table: the identity
// block (unchanged in version 2) and a state line of eight words.
struct v1_state {
    std::uint64_t root_offset, root_size, data_top, clean_shutdown, heap_offset, catalog_offset, profile, reserved;
};
static_assert(sizeof(v1_state) == 64);

// A complete version-1 store pool (a root, a heap and a catalog registered, profile "store",
// closed cleanly) of 64 KiB, byte by byte: what an older ferrite left on disk.
std::vector<char> version_1_pool() {
    std::vector<char> bytes(pm::min_pool_size, '\0');
    pm::pool_identity id{};
    id.magic = pm::pool_magic;
    id.version = 1;
    id.header_size = pm::pool_header_size;
    id.pool_size = pm::min_pool_size;
    id.uuid = {0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0x4d, 0xef, 0x81, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};
    std::memcpy(id.layout.data(), "test-v1", 7);
    id.created_unix_ns = 1'700'000'000'000'000'000ull;
    id.checksum = pm::identity_checksum(id);
    const v1_state st{pm::pool_header_size, 16 * 1024, pm::pool_header_size + 16 * 1024, 1,
                      pm::pool_header_size + 64, pm::pool_header_size + 8192, 0x31524f5453524546ull, 0};
    std::memcpy(bytes.data(), &id, sizeof id);
    std::memcpy(bytes.data() + 256, &st, sizeof st);
    return bytes;
}

class PoolFormatTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("ferrite-pool-format-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    fs::path dir_;
};

}  // namespace

TEST_F(PoolFormatTest, ThisFerriteWritesVersion2WithTheRootsTableAfterTheStateLine) {
    EXPECT_EQ(pm::pool_format_version, 2u);
    EXPECT_EQ(offsetof(pm::pool_header, roots), 320u);
    const auto path = dir_ / "new";
    auto p = pm::pool::create(path, "test-v1", pm::min_pool_size);
    EXPECT_EQ(p.identity().version, 2u);
}

TEST_F(PoolFormatTest, Version1PoolIsRefusedByEveryOpenAndLeftByteIdentical) {
    const auto path = dir_ / "old";
    const auto old = version_1_pool();
    write_file(path, old);
    const std::vector<std::pair<const char*, std::function<void()>>> opens = {
        {"open", [&] { (void)pm::pool::open(path, "test-v1"); }},
        {"open_unmarked", [&] { (void)pm::pool::open_unmarked(path, "test-v1"); }},
        {"inspect", [&] { (void)pm::pool::inspect(path); }},
    };
    for (const auto& [what, call] : opens) {
        SCOPED_TRACE(what);
        try {
            call();
            ADD_FAILURE() << "a version-1 pool was opened";
        } catch (const ferrite::pool_error& e) {
            EXPECT_EQ(e.kind(), pool_errc::wrong_version) << e.what();
            const std::string message = e.what();
            EXPECT_NE(message.find("format version 1"), std::string::npos) << message;
            EXPECT_NE(message.find("version 2"), std::string::npos) << message;
            EXPECT_NE(message.find(path.string()), std::string::npos) << message;
        }
        EXPECT_EQ(read_file(path), old) << "a refused open changed the file";
    }
    // Creating over it is refused as well (never overwritten).
    EXPECT_THROW((void)pm::pool::create(path, "test-v1", pm::min_pool_size), ferrite::pool_error);
    EXPECT_EQ(read_file(path), old);
}
