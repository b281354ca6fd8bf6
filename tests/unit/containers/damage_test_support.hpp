// What the damage tests of the vector and deque headers share (vector_damage_test.cpp,
// deque_damage_test.cpp): a pool on /dev/shm whose root holds anchor words and a buddy heap,
// the expectation "throws damaged_pool (damaged_object) and leaves every byte of the pool as
// it was", and the seeded word mutations of the fuzzing tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/error.hpp"
#include "ferrite/pmem/pool.hpp"
#include "ferrite/sim/rng.hpp"

namespace ferrite_test {

using u64 = std::uint64_t;
using heap_type = ferrite::alloc::buddy_heap;

// A pool file whose root starts with a line of anchor words, the heap after it.
class damage_pool {
public:
    static constexpr u64 heap_offset = 4096 + 64, heap_bytes = 192 * 1024, pool_bytes = 256 * 1024;
    static constexpr const char* layout = "damage-test";

    explicit damage_pool(const char* what) : path_(scratch_path(what)) {
        std::filesystem::remove(path_);
        pool_.emplace(ferrite::pmem::pool::create(path_, layout, pool_bytes));
        (void)words();  // the root first: it zero-fills
        heap_.reset(new heap_type(heap_type::create(*pool_, heap_offset, heap_bytes)));
    }
    ~damage_pool() {
        close();
        std::filesystem::remove(path_);
    }
    damage_pool(const damage_pool&) = delete;
    damage_pool& operator=(const damage_pool&) = delete;

    ferrite::pmem::pool& pool() { return *pool_; }
    heap_type& heap() { return *heap_; }
    // The 8 persistent words at the start of the root (anchors).
    u64* words() { return static_cast<u64*>(pool_->root_bytes(64 + heap_bytes)); }
    std::byte* at(u64 offset) { return pool_->base() + offset; }
    u64 offset_of(const void* p) const { return static_cast<u64>(static_cast<const std::byte*>(p) - pool_->base()); }
    // The pool offset of a free heap block (the heap has plenty).
    u64 free_block() const {
        for (const auto& b : heap_->blocks())
            if (b.state == ferrite::alloc::block_state::free) return offset_of(heap_->at(b.offset));
        ADD_FAILURE() << "no free block";
        return 0;
    }
    // Every heap block's pool offset.
    std::vector<u64> block_offsets() const {
        std::vector<u64> out;
        for (const auto& b : heap_->blocks()) out.push_back(offset_of(heap_->at(b.offset)));
        return out;
    }

    void close() {
        heap_.reset();
        pool_.reset();
    }
    // Open again as a restarted program would; the heap still needs recover().
    void reopen() {
        close();
        pool_.emplace(ferrite::pmem::pool::open(path_, layout));
        heap_.reset(new heap_type(heap_type::open(*pool_, heap_offset)));
    }
    // Open read-only (pool::inspect), as `ferrite pool check` does.
    void inspect() {
        close();
        pool_.emplace(ferrite::pmem::pool::inspect(path_));
        heap_.reset(new heap_type(heap_type::open(*pool_, heap_offset)));
    }

    // Load `image` (a closed pool's bytes) into the open pool, and open its heap again: a
    // restart without remapping (the heap needs recover()).
    void load(const std::string& image) {
        heap_.reset();
        std::memcpy(pool_->base(), image.data(), image.size());
        heap_.reset(new heap_type(heap_type::open(*pool_, heap_offset)));
    }
    // The open pool's bytes, from its mapping.
    std::string mapped_bytes() const { return {reinterpret_cast<const char*>(pool_->base()), pool_->size()}; }

    // The file's bytes (the mapping is shared: they are the pool's as it stands).
    std::string bytes() const {
        std::ifstream in(path_, std::ios::binary);
        return {std::istreambuf_iterator<char>(in), {}};
    }
    // Replace the file's bytes (the pool must be closed).
    void write(const std::string& image) const {
        std::ofstream out(path_, std::ios::binary | std::ios::trunc);
        out.write(image.data(), static_cast<std::streamsize>(image.size()));
    }

private:
    static std::string scratch_path(const char* what) {
        std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
        std::ranges::replace(test, '/', '-');  // parameterized tests: "Name/Param"
        return "/dev/shm/ferrite-" + std::string(what) + "-damage-test-" + std::to_string(::getpid()) + "-" + test;
    }

    std::string path_;
    std::optional<ferrite::pmem::pool> pool_;
    std::unique_ptr<heap_type> heap_;
};

// `call` throws damaged_pool of kind damaged_object for `region`, no object name, a message
// naming `word` and saying to restore the pool; the pool's bytes are unchanged.
template <class F>
void expect_damaged(const damage_pool& d, const char* region, const std::string& word, const char* what, F&& call) {
    const auto before = d.bytes();
    try {
        call();
        ADD_FAILURE() << what << ": no damaged_pool thrown (word " << word << ")";
    } catch (const ferrite::damaged_pool& e) {
        EXPECT_EQ(e.kind(), ferrite::pool_errc::damaged_object) << what << ": " << e.what();
        EXPECT_EQ(e.region(), region) << what;
        EXPECT_EQ(e.object(), "") << what;
        const std::string message = e.what();
        EXPECT_NE(message.find(word), std::string::npos) << what << ": the message names no '" << word << "': " << message;
        EXPECT_NE(message.find("restore the pool from a copy"), std::string::npos) << what << ": " << message;
    }
    EXPECT_TRUE(d.bytes() == before) << what << ": the pool's bytes changed";
}

// `call` refuses a pool of an older format as wrong_version (not as damage), with a message
// naming the old format and the current one (format 1 and format 2 unless told), and leaves
// the pool's bytes unchanged. `kind` names the structure in the failure messages ("vector",
// "deque").
template <class F>
void expect_format_one_refused(const damage_pool& d, const char* kind, const char* what, F&& call,
                               const char* old_format = "format 1", const char* current_format = "format 2") {
    const auto before = d.bytes();
    try {
        call();
        ADD_FAILURE() << what << ": a " << old_format << " " << kind << " was accepted";
    } catch (const ferrite::damaged_pool& e) {
        ADD_FAILURE() << what << ": reported as damage: " << e.what();
    } catch (const ferrite::pool_error& e) {
        EXPECT_EQ(e.kind(), ferrite::pool_errc::wrong_version) << what;
        const std::string m = e.what();
        EXPECT_NE(m.find(old_format), std::string::npos) << what << ": " << m;
        EXPECT_NE(m.find(current_format), std::string::npos) << what << ": " << m;
    }
    EXPECT_TRUE(d.bytes() == before) << what << ": the pool's bytes changed";
}

// A value to mutate a header word `old` with: a flipped bit, 0, ~0, 2^63, an offset inside the
// pool (aligned or not), a heap block's offset, a small number, or old +- 1.
inline u64 mutated_word(u64 old, u64 random, const std::vector<u64>& blocks) {
    const u64 r = random >> 8;
    switch (random % 10) {
        case 0: return old ^ (u64{1} << (r % 64));
        case 1: return 0;
        case 2: return ~u64{0};
        case 3: return u64{1} << 63;
        case 4: return r % damage_pool::pool_bytes;
        case 5: return r % damage_pool::pool_bytes & ~u64{63};
        case 6: return blocks[r % blocks.size()];
        case 7: return r % 40;
        case 8: return old + 1;
        default: return old - 1;
    }
}

// Mutates 1 to 3 of the `words` 8-byte words at pool offset `at` of `image`.
inline void mutate_words(std::string& image, u64 at, unsigned words, u64 seed, const std::vector<u64>& blocks) {
    const unsigned n = 1 + static_cast<unsigned>(ferrite::sim::mix(seed, 0) % 3);
    for (unsigned k = 0; k < n; ++k) {
        const u64 r = ferrite::sim::mix(seed, k + 1);
        const u64 offset = at + 8 * (r % words);
        u64 word;
        std::memcpy(&word, image.data() + offset, 8);
        word = mutated_word(word, ferrite::sim::mix(seed, k + 100), blocks);
        std::memcpy(image.data() + offset, &word, 8);
    }
}

}  // namespace ferrite_test
