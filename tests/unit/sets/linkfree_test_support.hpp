// The fixture of the link-free tables' unit tests: a pool on /dev/shm with a buddy heap,
// the table's anchor in the root, restarts, and finding a key's node in the pool's bytes.
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
#include "ferrite/sets/linkfree_table.hpp"

namespace ferrite::sets::testing {

class LinkfreePool : public ::testing::Test {
protected:
    static constexpr std::uint64_t heap_bytes = 8 << 20;

    void SetUp() override {
        path_ = "/dev/shm/ferrite-linkfree-test-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name();
        std::replace(path_.begin() + 9, path_.end(), '/', '-');  // parameterised names hold '/'
        std::filesystem::remove(path_);
        pool_ = std::make_unique<pmem::pool>(pmem::pool::create(path_, "linkfree-test", 16 << 20));
        root_ = static_cast<std::byte*>(pool_->root_bytes(64 + heap_bytes));
        heap_offset_ = static_cast<std::uint64_t>(root_ - pool_->base()) + 64;
        heap_.reset(new alloc::buddy_heap(alloc::buddy_heap::create(*pool_, heap_offset_, heap_bytes)));
    }
    void TearDown() override {
        heap_.reset();
        pool_.reset();
        std::filesystem::remove(path_);
    }

    std::uint64_t& anchor() { return *reinterpret_cast<std::uint64_t*>(root_); }

    template <class Table>
    Table create(set_layout l, typename Table::options o = small()) {
        return Table::create(*pool_, *heap_, anchor(), l, o);
    }
    // A restart after a crash: the heap opened again, every recovery, then open().
    template <class Table>
    Table restart(set_layout l, typename Table::options o = small()) {
        recover_all<Table>();
        return Table::open(*pool_, *heap_, anchor(), l, o);
    }
    // The persistent recovery of a restart: the heap opened again, recovered with the set's.
    template <class Table>
    void recover_all() {
        heap_.reset();
        heap_.reset(new alloc::buddy_heap(alloc::buddy_heap::open(*pool_, heap_offset_)));
        heap_->recover();
        Table::recover(*pool_, *heap_, anchor());
        heap_->finish_recovery();
    }
    struct small_tag {
        template <class O>
        operator O() const {
            O o;
            o.area_bytes = 4096;
            o.recovery_threads = 2;
            return o;
        }
    };
    static small_tag small() { return {}; }

    std::vector<std::byte> bytes() const { return {pool_->base(), pool_->base() + pool_->size()}; }

    // Every node line in the heap whose key bytes (at offset 24) equal `key`.
    template <class K>
    std::vector<std::byte*> lines_with_key(const K& key) const {
        std::vector<std::byte*> found;
        std::byte* begin = root_ + 64;
        for (std::byte* p = begin; p + 64 <= begin + heap_bytes; p += 64)
            if (std::memcmp(p + 24, &key, sizeof(K)) == 0 && (static_cast<std::uint8_t>(p[16]) & 1) != 0)
                found.push_back(p);
        return found;
    }

    std::string path_;
    std::unique_ptr<pmem::pool> pool_;
    std::byte* root_ = nullptr;
    std::uint64_t heap_offset_ = 0;
    std::unique_ptr<alloc::buddy_heap> heap_;
};

}  // namespace ferrite::sets::testing
