// Where pool files live (pool_path.hpp): a bare name resolves under $FERRITE_POOL_DIR (or
// /dev/shm when it is unset or empty), a path with a directory part is used as given, and
// create/open/inspect of a bare name use the pool directory.
#include "ferrite/pmem/pool_path.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "ferrite/pmem/pool.hpp"
#include "test_support.hpp"

namespace pm = ferrite::pmem;
namespace fs = std::filesystem;

namespace {

// Saves $FERRITE_POOL_DIR before each test and restores it after.
class PoolPathTest : public ferrite_test::pool_dir_test {
protected:
    void SetUp() override {
        pool_dir_test::SetUp();
        if (const char* v = std::getenv(pm::pool_dir_env)) saved_ = v;
    }
    void TearDown() override {
        if (saved_)
            ::setenv(pm::pool_dir_env, saved_->c_str(), 1);
        else
            ::unsetenv(pm::pool_dir_env);
        pool_dir_test::TearDown();
    }

private:
    std::optional<std::string> saved_;
};

TEST_F(PoolPathTest, EnvironmentVariableNameAndDefault) {
    EXPECT_STREQ(pm::pool_dir_env, "FERRITE_POOL_DIR");
    EXPECT_STREQ(pm::default_pool_dir, "/dev/shm");
}

TEST_F(PoolPathTest, DirectoryDefaultsToDevShm) {
    ASSERT_EQ(::unsetenv(pm::pool_dir_env), 0);
    EXPECT_EQ(pm::pool_directory(), fs::path("/dev/shm"));
    EXPECT_EQ(pm::resolve_pool_path("orders"), fs::path("/dev/shm/orders"));
}

TEST_F(PoolPathTest, EmptyVariableMeansTheDefault) {
    ASSERT_EQ(::setenv(pm::pool_dir_env, "", 1), 0);
    EXPECT_EQ(pm::pool_directory(), fs::path("/dev/shm"));
    EXPECT_EQ(pm::resolve_pool_path("orders"), fs::path("/dev/shm/orders"));
}

TEST_F(PoolPathTest, VariableSetsTheDirectory) {
    ASSERT_EQ(::setenv(pm::pool_dir_env, "/mnt/pmem0", 1), 0);
    EXPECT_EQ(pm::pool_directory(), fs::path("/mnt/pmem0"));
    EXPECT_EQ(pm::resolve_pool_path("orders"), fs::path("/mnt/pmem0/orders"));
}

TEST_F(PoolPathTest, BareNameResolvesUnderTheGivenDirectory) {
    EXPECT_EQ(pm::resolve_pool_path("orders", "/pools"), fs::path("/pools/orders"));
    EXPECT_EQ(pm::resolve_pool_path("orders.pool", "/pools/"), fs::path("/pools/orders.pool"));
    EXPECT_EQ(pm::resolve_pool_path("orders", "relative/dir"), fs::path("relative/dir/orders"));
}

TEST_F(PoolPathTest, PathWithADirectoryPartIsUsedAsGiven) {
    ASSERT_EQ(::setenv(pm::pool_dir_env, "/mnt/pmem0", 1), 0);
    for (const char* p : {"./orders", "../orders", "/mnt/pmem1/orders", "a/b/orders", "/orders"}) {
        EXPECT_EQ(pm::resolve_pool_path(p), fs::path(p)) << p;
        EXPECT_EQ(pm::resolve_pool_path(p, "/pools"), fs::path(p)) << p;
    }
}

TEST_F(PoolPathTest, CreateOpenInspectOfABareNameUseThePoolDirectory) {
    ASSERT_EQ(::setenv(pm::pool_dir_env, dir().c_str(), 1), 0);
    {
        auto p = pm::pool::create("orders", "orders-v1", pm::min_pool_size);
        EXPECT_EQ(p.path(), dir() / "orders");
        p.root<std::uint64_t>() = 17;
    }
    EXPECT_TRUE(fs::is_regular_file(dir() / "orders"));
    {
        auto p = pm::pool::open("orders", "orders-v1");
        EXPECT_EQ(p.path(), dir() / "orders");
        EXPECT_EQ(p.root<std::uint64_t>(), 17u);
    }
    auto i = pm::pool::inspect("orders");
    EXPECT_EQ(i.path(), dir() / "orders");
    EXPECT_TRUE(i.read_only());

    // A path with a directory part ignores the pool directory.
    ASSERT_EQ(::setenv(pm::pool_dir_env, "/nonexistent-ferrite-dir", 1), 0);
    auto j = pm::pool::inspect(dir() / "orders");
    EXPECT_EQ(j.path(), dir() / "orders");
    try {
        (void)pm::pool::open("orders", "orders-v1");
        ADD_FAILURE() << "opened a bare name outside the pool directory";
    } catch (const ferrite::pool_error& e) {
        EXPECT_EQ(e.kind(), ferrite::pool_errc::not_found);
        EXPECT_NE(std::string(e.what()).find("/nonexistent-ferrite-dir/orders"), std::string::npos)
            << e.what();
    }
}

}  // namespace
