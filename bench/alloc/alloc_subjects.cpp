// bench/alloc/alloc_subjects.cpp: the allocators and clients of the allocator benchmark.
#include "bench/alloc/alloc_subjects.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <system_error>

#include "ferrite/error.hpp"
#include "ferrite/pmem/pool_path.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace ferrite::bench::alloc_bench {
namespace {

constexpr std::size_t words_bytes = sizeof(client_word) * max_threads;
constexpr std::uint64_t pool_bytes = heap_bytes + (std::uint64_t{16} << 20);
constexpr std::size_t pmdk_pool_bytes = std::size_t{160} << 20;
constexpr std::uint64_t pmdk_type = 1;

[[noreturn]] void pmdk_fail(const char* what) {
    const char* msg = pmemobj_errormsg();
    throw error(std::string(what) + ": " + (msg && *msg ? msg : std::strerror(errno)));
}

}  // namespace

// ---- buddy / volatile ------------------------------------------------------------------

void buddy_pair(alloc::buddy_heap& heap, client_word& word, std::size_t bytes) {
    void* b = heap.allocate(bytes);
    word.offset = heap.offset_of(b);
    pmem::pwb(&word.offset);
    pmem::pfence();
    heap.confirm_allocation(b);

    heap.deallocate(b);
    word.offset = 0;
    pmem::pwb(&word.offset);
    pmem::pfence();
    heap.confirm_deallocation(b);
}

buddy_warmup::buddy_warmup(alloc::buddy_heap& heap, std::size_t bytes) : heap_(heap) {
    // Untimed set-up: the references to these blocks live in this vector only (a real client
    // would persist them; that changes nothing that is measured).
    std::vector<void*> all;
    all.reserve(2 * warm_blocks);
    for (std::size_t i = 0; i < 2 * warm_blocks; ++i) {
        void* b = heap_.allocate(bytes);
        heap_.confirm_allocation(b);
        all.push_back(b);
    }
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (i % 2 == 0) {
            heap_.deallocate(all[i]);
            heap_.confirm_deallocation(all[i]);
        } else {
            kept_.push_back(all[i]);
        }
    }
}

buddy_warmup::~buddy_warmup() {
    for (void* b : kept_) {
        heap_.deallocate(b);
        heap_.confirm_deallocation(b);
    }
}

namespace {
// A fresh pool file path; removes a leftover of a killed run with the same pid.
std::filesystem::path fresh_pool_path() {
    auto path = pmem::pool_directory() /
                ("ferrite-alloc-bench-" + std::to_string(::getpid()) + ".pool");
    std::error_code ec;
    std::filesystem::remove(path, ec);
    return path;
}
}  // namespace

persistent_heap::persistent_heap()
    : path_(fresh_pool_path()), pool_(pmem::pool::create(path_, "ferrite-alloc-bench", pool_bytes)) {
    auto* root = static_cast<std::byte*>(pool_.root_bytes(words_bytes + heap_bytes, 64));
    words_ = reinterpret_cast<client_word*>(root);
    const auto offset = static_cast<std::uint64_t>(root + words_bytes - pool_.base());
    heap_.reset(new alloc::buddy_heap(alloc::buddy_heap::create(pool_, offset, heap_bytes)));
}

persistent_heap::~persistent_heap() {
    heap_.reset();
    pool_.close();
    std::error_code ec;
    std::filesystem::remove(path_, ec);
}

dram_heap::dram_heap() {
    // aligned_alloc wants a size that is a multiple of the alignment.
    constexpr std::size_t page = 4096;
    region_ = std::aligned_alloc(page, (words_bytes + heap_bytes + page - 1) / page * page);
    if (!region_) throw std::bad_alloc();
    std::memset(region_, 0, words_bytes);
    words_ = static_cast<client_word*>(region_);
    heap_.reset(new alloc::buddy_heap(
        alloc::buddy_heap::create_in(static_cast<std::byte*>(region_) + words_bytes, heap_bytes)));
}

dram_heap::~dram_heap() {
    heap_.reset();
    std::free(region_);
}

volatile_scope::volatile_scope() : previous_(pmem::install_observer(&observer_)) {}
volatile_scope::~volatile_scope() { pmem::install_observer(previous_); }

// ---- pmdk ------------------------------------------------------------------------------

pmdk_heap::pmdk_heap() : pool_({}, "alloc", pmdk_pool_bytes) {
    root_ = pmdk::direct<pmdk_root>(pool_.root(sizeof(pmdk_root)));
}

void pmdk_pair(PMEMobjpool* pop, PMEMoid& slot, std::size_t bytes) {
    if (pmemobj_alloc(pop, &slot, bytes, pmdk_type, nullptr, nullptr) != 0) pmdk_fail("pmemobj_alloc");
    pmemobj_free(&slot);
}

pmdk_warmup::pmdk_warmup(pmdk_heap& h, std::size_t thread, std::size_t bytes)
    : kept_(h.root().kept[thread]) {
    for (std::size_t i = 0; i < 2 * warm_blocks; ++i)
        if (pmemobj_alloc(h.pop(), &kept_[i], bytes, pmdk_type, nullptr, nullptr) != 0)
            pmdk_fail("pmemobj_alloc (warm-up)");
    for (std::size_t i = 0; i < 2 * warm_blocks; i += 2) pmemobj_free(&kept_[i]);
}

pmdk_warmup::~pmdk_warmup() {
    for (std::size_t i = 0; i < 2 * warm_blocks; ++i)
        if (!OID_IS_NULL(kept_[i])) pmemobj_free(&kept_[i]);
}

}  // namespace ferrite::bench::alloc_bench
