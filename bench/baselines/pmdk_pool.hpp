// bench/baselines/pmdk_pool.hpp: a scratch libpmemobj pool and a transaction guard, shared by
// the PMDK baselines (vector-pmdk, stack-pmdk, queue-pmdk).
//
// The baselines use libpmemobj's function API (pmemobj_tx_begin / _add_range / _commit /
// _end) rather than the TX_BEGIN macros: the macros rely on setjmp and C casts that the
// project's warning flags reject, and a RAII guard states the abort path plainly.
//
// libpmemobj flushes through libpmem, not through ferrite/pmem: its pwb/pfence are invisible
// to ferrite's counters (subjects report persistence_counted() == false), and this folder is
// the one place scripts/check-chokepoint.sh lets persistence bypass ferrite/pmem.
//
// On a tmpfs or other non-DAX file libpmem would make every flush an msync(2) system call,
// which measures the kernel rather than PMDK. Unless the user set it, the pool sets
// PMEM_IS_PMEM_FORCE=1 before the first pool is created, so libpmem flushes with the CPU's
// cache-line write-back instruction exactly as ferrite's clwb backend does on the same file.
#pragma once

#include <libpmemobj.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace ferrite::bench::pmdk {

// A pool file created fresh in `dir` (empty: the ferrite pool directory), closed and removed
// by the destructor. Throws ferrite::error with PMDK's message if it cannot be created.
class pool {
public:
    pool(const std::filesystem::path& dir, const std::string& tag, std::size_t size);
    ~pool();
    pool(const pool&) = delete;
    pool& operator=(const pool&) = delete;

    PMEMobjpool* get() const noexcept { return pop_; }
    // The root object (zeroed on creation), at least `size` bytes.
    PMEMoid root(std::size_t size);
    const std::filesystem::path& path() const noexcept { return path_; }

private:
    std::filesystem::path path_;
    PMEMobjpool* pop_ = nullptr;
};

template <class T>
T* direct(PMEMoid oid) noexcept {
    return static_cast<T*>(pmemobj_direct(oid));
}

// One transaction on the calling thread. Every failing step throws ferrite::error (PMDK has
// then aborted the transaction); the destructor aborts a transaction that was not committed
// and always ends it.
class transaction {
public:
    explicit transaction(PMEMobjpool* pop);
    ~transaction();
    transaction(const transaction&) = delete;
    transaction& operator=(const transaction&) = delete;

    // Undo-log [off, off + size) of the object and flush it at commit.
    void add(PMEMoid oid, std::uint64_t off, std::size_t size);
    // Flush [off, off + size) at commit without undo-logging it: only for bytes that no
    // committed state can reach (a slot past a vector's size).
    void add_unlogged(PMEMoid oid, std::uint64_t off, std::size_t size);
    PMEMoid alloc(std::size_t size, std::uint64_t type_num);
    void free(PMEMoid oid);
    void commit();  // commit and end; throws if PMDK aborted instead

private:
    bool ended_ = false;
};

}  // namespace ferrite::bench::pmdk

namespace ferrite::bench::pmdk {

// Pool size for a structure that will hold about `elements` items of `bytes_each` bytes
// (allocation headers and log space included in the headroom).
inline std::size_t pool_size_for(std::uint64_t elements, std::size_t bytes_each) {
    constexpr std::size_t headroom = std::size_t{64} << 20;
    return headroom + static_cast<std::size_t>(elements) * bytes_each * 4;
}

}  // namespace ferrite::bench::pmdk
