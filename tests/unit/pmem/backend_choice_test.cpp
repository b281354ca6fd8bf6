// The platform picks the backend (pmem/backend.hpp, rule 3): libpmem2's store granularity
// of each pool mapping decides between fences only (byte) and write-back (cache line, page),
// the environment and the program override it, and a write-back choice is never undone.
// Granularity is forced with libpmem2's PMEM2_FORCE_GRANULARITY (BYTE, CACHE_LINE, PAGE):
// this machine's /dev/shm is page granularity.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "ferrite/pmem/backend.hpp"
#include "ferrite/pmem/pool.hpp"

namespace pm = ferrite::pmem;

namespace {

class BackendChoice : public ::testing::Test {
protected:
    void SetUp() override {
        ::unsetenv("FERRITE_BACKEND");
        ::unsetenv("FERRITE_PMEM_BACKEND");
        ::unsetenv("PMEM2_FORCE_GRANULARITY");
        pm::detail::forget_backend_choice();
    }
    void TearDown() override {
        ::unsetenv("FERRITE_BACKEND");
        ::unsetenv("PMEM2_FORCE_GRANULARITY");
        pm::detail::forget_backend_choice();
        for (const auto& p : paths_) std::filesystem::remove(p);
    }
    // A new pool mapped with the granularity libpmem2 is told to report.
    pm::granularity map_pool(const char* forced) {
        if (forced) ::setenv("PMEM2_FORCE_GRANULARITY", forced, 1);
        else ::unsetenv("PMEM2_FORCE_GRANULARITY");
        const std::string path = "/dev/shm/ferrite-backend-choice-" + std::to_string(::getpid()) + "-" +
                                 std::to_string(paths_.size());
        paths_.push_back(path);
        std::filesystem::remove(path);
        auto p = pm::pool::create(path, "backend-choice", 1 << 20);
        return p.granularity();
    }
    std::vector<std::string> paths_;
};

TEST_F(BackendChoice, ByteGranularityMeansFencesOnly) {
    ASSERT_EQ(map_pool("BYTE"), pm::granularity::byte);
    EXPECT_EQ(pm::current_backend(), pm::backend::none);
    EXPECT_NE(pm::backend_reason().find("byte granularity"), std::string::npos) << pm::backend_reason();
}

TEST_F(BackendChoice, CacheLineGranularityKeepsTheBestWriteBack) {
    ASSERT_EQ(map_pool("CACHE_LINE"), pm::granularity::cache_line);
    EXPECT_EQ(pm::current_backend(), pm::detect_backend());
    EXPECT_NE(pm::backend_reason().find("cache-line granularity"), std::string::npos) << pm::backend_reason();
}

TEST_F(BackendChoice, TheTmpfsStandInKeepsTheCacheLineDefault) {
    ASSERT_EQ(map_pool(nullptr), pm::granularity::page) << "this test expects /dev/shm (tmpfs)";
    EXPECT_EQ(pm::current_backend(), pm::detect_backend());
    EXPECT_NE(pm::backend_reason().find("page granularity"), std::string::npos) << pm::backend_reason();
}

TEST_F(BackendChoice, OnePoolThatNeedsWriteBackDecidesForTheProcess) {
    map_pool("BYTE");
    ASSERT_EQ(pm::current_backend(), pm::backend::none);
    map_pool("PAGE");
    EXPECT_EQ(pm::current_backend(), pm::detect_backend());
    map_pool("BYTE");  // never back to none while a pool that needs write-back may be open
    EXPECT_EQ(pm::current_backend(), pm::detect_backend());
    EXPECT_NE(pm::backend_reason().find("another one of this process needs write-back"), std::string::npos)
        << pm::backend_reason();
}

TEST_F(BackendChoice, TheEnvironmentOverridesThePlatform) {
    ::setenv("FERRITE_BACKEND", "clflush", 1);
    pm::detail::forget_backend_choice();
    map_pool("BYTE");
    EXPECT_EQ(pm::current_backend(), pm::backend::clflush);
    EXPECT_NE(pm::backend_reason().find("FERRITE_BACKEND=clflush"), std::string::npos) << pm::backend_reason();
}

TEST_F(BackendChoice, TheProgramOverridesThePlatform) {
    pm::set_backend(pm::backend::clflush);
    map_pool("BYTE");
    EXPECT_EQ(pm::current_backend(), pm::backend::clflush);
    EXPECT_NE(pm::backend_reason().find("set_backend"), std::string::npos) << pm::backend_reason();
}

}  // namespace
