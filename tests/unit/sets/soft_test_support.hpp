// A pool with a buddy heap and one anchor word for the SOFT table tests: create, close and
// open again, restart as after a crash (heap recover, table recover, finish).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/pmem/pool.hpp"
#include "ferrite/sets/soft_table.hpp"

namespace ferrite::sets::test {

struct key16 {
    std::uint64_t a, b;
    friend bool operator==(const key16&, const key16&) = default;
};
struct value24 {
    std::uint64_t x, y, z;
    friend bool operator==(const value24&, const value24&) = default;
};

class soft_pool_test : public ::testing::Test {
protected:
    virtual std::uint64_t heap_bytes() const { return 4 << 20; }

    void SetUp() override {
        path_ = "/dev/shm/ferrite-soft-test-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name();
        std::replace(path_.begin() + 9, path_.end(), '/', '-');  // parameterised names
        std::filesystem::remove(path_);
        pool_ = std::make_unique<pmem::pool>(pmem::pool::create(path_, "soft-test", heap_bytes() + (1 << 20)));
        root_ = static_cast<std::byte*>(pool_->root_bytes(64 + heap_bytes()));
        heap_offset_ = static_cast<std::uint64_t>(root_ - pool_->base()) + 64;
        heap_.reset(new alloc::buddy_heap(alloc::buddy_heap::create(*pool_, heap_offset_, heap_bytes())));
    }
    void TearDown() override {
        heap_.reset();
        pool_.reset();
        std::filesystem::remove(path_);
    }

    std::uint64_t& anchor() { return *reinterpret_cast<std::uint64_t*>(root_); }

    template <class T>
    T create(set_layout l, typename T::options o = {}) {
        o.area_bytes = 4096;
        return T::create(*pool_, *heap_, anchor(), l, o);
    }
    template <class T>
    T open(set_layout l, typename T::options o = {}) {
        return T::open(*pool_, *heap_, anchor(), l, o);
    }
    // What a restart does: the heap opened again and recovered, the table's store recovered,
    // the heap's recovery finished. The table is opened by the caller.
    template <class T>
    void restart() {
        heap_.reset();
        heap_.reset(new alloc::buddy_heap(alloc::buddy_heap::open(*pool_, heap_offset_)));
        heap_->recover();
        T::recover(*pool_, *heap_, anchor());
        heap_->finish_recovery();
    }
    std::vector<std::byte> bytes() const { return {pool_->base(), pool_->base() + pool_->size()}; }
    std::byte* base() const { return pool_->base(); }

    std::string path_;
    std::unique_ptr<pmem::pool> pool_;
    std::byte* root_ = nullptr;
    std::uint64_t heap_offset_ = 0;
    std::unique_ptr<alloc::buddy_heap> heap_;
};

}  // namespace ferrite::sets::test
