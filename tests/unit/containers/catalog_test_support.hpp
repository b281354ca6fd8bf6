// The fixture of the catalog tests: a pool on /dev/shm with a heap, reopened (and
// recovered) as a restarted program would.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <unistd.h>

#include "ferrite/containers/catalog.hpp"

namespace ferrite_test {

class CatalogTest : public ::testing::Test {
protected:
    void SetUp() override {
        path_ = "/dev/shm/ferrite-catalog-test-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name();
        std::filesystem::remove(path_);
        pool_.emplace(ferrite::pmem::pool::create(path_, "catalog-test", 16 << 20));
        auto* region = static_cast<std::byte*>(pool_->root_bytes(8 << 20));
        heap_.reset(new ferrite::alloc::buddy_heap(ferrite::alloc::buddy_heap::create(*pool_, static_cast<std::uint64_t>(region - pool_->base()), 8 << 20)));
    }
    void TearDown() override {
        heap_.reset();
        pool_.reset();
        std::filesystem::remove(path_);
    }
    // Close and open again (pointers into the old mapping are invalid afterwards).
    void reopen(bool recover = true) {
        heap_.reset();
        pool_.reset();
        pool_.emplace(ferrite::pmem::pool::open(path_, "catalog-test"));
        heap_.reset(new ferrite::alloc::buddy_heap(ferrite::alloc::buddy_heap::open(*pool_, pool_->heap_offset())));
        if (recover) ferrite::catalog::recover_pool(*pool_, *heap_);
    }
    std::string path_;
    std::optional<ferrite::pmem::pool> pool_;
    std::unique_ptr<ferrite::alloc::buddy_heap> heap_;
};

}  // namespace ferrite_test
