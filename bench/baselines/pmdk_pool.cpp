// bench/baselines/pmdk_pool.cpp: scratch libpmemobj pools and the transaction guard.
#include "bench/baselines/pmdk_pool.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <system_error>

#include "ferrite/error.hpp"
#include "ferrite/pmem/pool_path.hpp"

namespace ferrite::bench::pmdk {
namespace {

// POBJ_XADD_NO_SNAPSHOT, spelled without the header macro's C-style cast.
constexpr std::uint64_t xadd_no_snapshot = std::uint64_t{1} << 2;
static_assert(xadd_no_snapshot == POBJ_XADD_NO_SNAPSHOT, "libpmemobj changed its flag values");

std::string pmdk_message(const char* what) {
    const char* msg = pmemobj_errormsg();
    return std::string(what) + ": " + (msg && *msg ? msg : std::strerror(errno));
}

[[noreturn]] void fail(const char* what) { throw error(pmdk_message(what)); }

void force_pmem_once() {
    static std::once_flag once;
    std::call_once(once, [] { ::setenv("PMEM_IS_PMEM_FORCE", "1", /*overwrite=*/0); });
}

}  // namespace

pool::pool(const std::filesystem::path& dir, const std::string& tag, std::size_t size) {
    force_pmem_once();
    static std::atomic<unsigned> serial{0};
    const auto base = dir.empty() ? pmem::pool_directory() : dir;
    path_ = base / ("ferrite-bench-" + tag + "-" + std::to_string(::getpid()) + "-" +
                    std::to_string(serial.fetch_add(1)) + ".pmdk");
    std::error_code ec;
    std::filesystem::remove(path_, ec);  // a leftover of a killed run with the same pid
    pop_ = pmemobj_create(path_.c_str(), ("ferrite-bench-" + tag).c_str(), size, 0600);
    if (!pop_) throw error(pmdk_message(("cannot create PMDK pool " + path_.string()).c_str()));
}

pool::~pool() {
    if (pop_) pmemobj_close(pop_);
    std::error_code ec;
    std::filesystem::remove(path_, ec);
}

PMEMoid pool::root(std::size_t size) {
    PMEMoid r = pmemobj_root(pop_, size);
    if (OID_IS_NULL(r)) fail("pmemobj_root");
    return r;
}

transaction::transaction(PMEMobjpool* pop) {
    if (pmemobj_tx_begin(pop, nullptr, TX_PARAM_NONE) != 0) {
        pmemobj_tx_end();
        fail("pmemobj_tx_begin");
    }
}

transaction::~transaction() {
    if (ended_) return;
    if (pmemobj_tx_stage() == TX_STAGE_WORK) pmemobj_tx_abort(ECANCELED);
    pmemobj_tx_end();
}

void transaction::add(PMEMoid oid, std::uint64_t off, std::size_t size) {
    if (pmemobj_tx_add_range(oid, off, size) != 0) fail("pmemobj_tx_add_range");
}

void transaction::add_unlogged(PMEMoid oid, std::uint64_t off, std::size_t size) {
    if (pmemobj_tx_xadd_range(oid, off, size, xadd_no_snapshot) != 0) fail("pmemobj_tx_xadd_range");
}

PMEMoid transaction::alloc(std::size_t size, std::uint64_t type_num) {
    PMEMoid oid = pmemobj_tx_alloc(size, type_num);
    if (OID_IS_NULL(oid)) fail("pmemobj_tx_alloc");
    return oid;
}

void transaction::free(PMEMoid oid) {
    if (pmemobj_tx_free(oid) != 0) fail("pmemobj_tx_free");
}

void transaction::commit() {
    pmemobj_tx_commit();
    ended_ = true;
    if (const int err = pmemobj_tx_end(); err != 0) {
        errno = err;
        fail("PMDK transaction aborted at commit");
    }
}

}  // namespace ferrite::bench::pmdk
