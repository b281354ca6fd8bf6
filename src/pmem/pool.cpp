// Pool create / open / close (see ferrite/pmem/pool.hpp for the rules this file keeps).
#include "ferrite/pmem/pool.hpp"

#include <fcntl.h>
#include <libpmem2.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "ferrite/pmem/pool_path.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace ferrite::pmem {
namespace {

[[noreturn]] void fail(pool_errc kind, const std::filesystem::path& path, const std::string& what) {
    throw pool_error(kind, "pool '" + path.string() + "': " + what);
}

std::string errno_text(int err) { return std::strerror(err); }

std::string bytes_text(std::uint64_t n) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    double v = static_cast<double>(n);
    while (v >= 1024 && u < 4) v /= 1024, ++u;
    char buf[32];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
    return buf;
}

// Owns a file descriptor until release().
struct fd_guard {
    int fd = -1;
    ~fd_guard() { if (fd >= 0) ::close(fd); }
    int release() { return std::exchange(fd, -1); }
};

struct pmem2_mapping {
    pmem2_map* map = nullptr;
    void* addr = nullptr;
    enum granularity gran = granularity::page;
};

pmem2_mapping map_with_pmem2(int fd, bool read_only, const std::filesystem::path& path) {
    pmem2_config* cfg = nullptr;
    pmem2_source* src = nullptr;
    pmem2_mapping m;
    auto cleanup = [&] {
        if (src) pmem2_source_delete(&src);
        if (cfg) pmem2_config_delete(&cfg);
    };
    int rc = pmem2_config_new(&cfg);
    if (rc == 0) rc = pmem2_source_from_fd(&src, fd);
    // Accept any granularity: we report it, and tmpfs (page granularity) is the common case.
    if (rc == 0) rc = pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE);
    if (rc == 0 && read_only) {
        rc = pmem2_config_set_protection(cfg, PMEM2_PROT_READ);
        if (rc == 0) rc = pmem2_config_set_sharing(cfg, PMEM2_PRIVATE);
    }
    if (rc == 0) rc = pmem2_map_new(&m.map, cfg, src);
    if (rc != 0) {
        std::string msg = pmem2_errormsg();
        cleanup();
        fail(pool_errc::io, path, "cannot map the file with libpmem2: " + msg);
    }
    cleanup();
    m.addr = pmem2_map_get_address(m.map);
    switch (pmem2_map_get_store_granularity(m.map)) {
        case PMEM2_GRANULARITY_BYTE: m.gran = granularity::byte; break;
        case PMEM2_GRANULARITY_CACHE_LINE: m.gran = granularity::cache_line; break;
        default: m.gran = granularity::page; break;
    }
    return m;
}

void check_layout_name(std::string_view layout, const std::filesystem::path& path) {
    if (layout.empty() || layout.size() > max_layout_name)
        fail(pool_errc::bad_layout_name, path,
             "layout name must be 1 to " + std::to_string(max_layout_name) + " bytes (got " +
                 std::to_string(layout.size()) + ")");
    for (char c : layout)
        if (c < 0x21 || c > 0x7e)
            fail(pool_errc::bad_layout_name, path,
                 "layout name must be printable ASCII without spaces");
}

// Validate a header read from a file of `file_size` bytes. `layout` == nullptr: any layout.
void validate_header(const pool_header& h, std::uint64_t file_size, const std::string_view* layout,
                     const std::filesystem::path& path) {
    const auto& id = h.identity;
    if (id.magic != pool_magic)
        fail(pool_errc::foreign, path,
             "not a ferrite pool (wrong magic bytes); check the path, ferrite never opens "
             "foreign files");
    if (id.version != pool_format_version)
        fail(pool_errc::wrong_version, path,
             "pool format version " + std::to_string(id.version) + ", this ferrite reads version " +
                 std::to_string(pool_format_version) + "; open it with a matching ferrite release");
    if (identity_checksum(id) != id.checksum || id.header_size != pool_header_size ||
        id.layout.back() != '\0')
        fail(pool_errc::corrupted_header, path,
             "header checksum mismatch: the header is corrupted; restore the pool from a backup");
    if (id.pool_size > file_size)
        fail(pool_errc::truncated, path,
             "file is truncated: header says " + std::to_string(id.pool_size) + " bytes, file has " +
                 std::to_string(file_size) + "; restore the pool from a backup");
    if (id.pool_size < file_size)
        fail(pool_errc::corrupted_header, path,
             "file is larger than its header says (" + std::to_string(file_size) + " > " +
                 std::to_string(id.pool_size) + "); it was modified outside ferrite");
    const auto& st = h.state;
    // Written without sums, which could wrap around for a damaged header.
    bool root_ok = st.root_offset == 0 ||
                   (st.root_offset >= pool_header_size && st.root_offset <= st.data_top &&
                    st.root_size <= st.data_top - st.root_offset);
    const auto offset_ok = [&](std::uint64_t off) {
        return off == 0 || (off >= pool_header_size && off < id.pool_size);
    };
    if (st.data_top < pool_header_size || st.data_top > id.pool_size || !root_ok ||
        !offset_ok(st.heap_offset) || !offset_ok(st.catalog_offset))
        fail(pool_errc::corrupted_header, path,
             "pool state is out of range (root, heap, catalog or used size beyond the pool); the header is "
             "corrupted; restore the pool from a backup");
    if (layout && id.layout_name() != *layout)
        fail(pool_errc::wrong_layout, path,
             "pool has layout '" + std::string(id.layout_name()) + "', expected '" +
                 std::string(*layout) + "'; open it with the program that created it");
}

std::array<std::uint8_t, 16> random_uuid() {
    std::array<std::uint8_t, 16> u{};
    std::size_t got = 0;
    while (got < u.size()) {
        ssize_t n = getrandom(u.data() + got, u.size() - got, 0);
        if (n < 0 && errno != EINTR) break;
        if (n > 0) got += static_cast<std::size_t>(n);
    }
    u[6] = static_cast<std::uint8_t>((u[6] & 0x0f) | 0x40);  // version 4
    u[8] = static_cast<std::uint8_t>((u[8] & 0x3f) | 0x80);  // RFC 4122 variant
    return u;
}

bool file_is_dax(int fd) noexcept {
    struct statx sx {};
    if (::statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &sx) != 0) return false;
    return (sx.stx_attributes_mask & STATX_ATTR_DAX) && (sx.stx_attributes & STATX_ATTR_DAX);
}

}  // namespace

std::string_view to_string(granularity g) noexcept {
    switch (g) {
        case granularity::byte: return "byte";
        case granularity::cache_line: return "cache_line";
        case granularity::page: return "page";
    }
    return "?";
}

pool pool::create(const std::filesystem::path& name, std::string_view layout, std::uint64_t size) {
    const auto path = resolve_pool_path(name);
    check_layout_name(layout, path);
    if (size < min_pool_size)
        fail(pool_errc::size_too_small, path,
             "size " + bytes_text(size) + " is below the minimum of " + bytes_text(min_pool_size));
    if (size > max_pool_size)
        fail(pool_errc::size_too_large, path,
             "size " + bytes_text(size) + " is above the maximum of " + bytes_text(max_pool_size));
    size = (size + 4095) & ~std::uint64_t{4095};

    std::error_code ec;
    if (std::filesystem::symlink_status(path, ec).type() != std::filesystem::file_type::not_found)
        fail(pool_errc::already_exists, path,
             "a file already exists at this path; ferrite never overwrites: remove it or pick "
             "another name");
    // Check free space first so a huge request fails clearly, not after filling the disk.
    const auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    struct statvfs vfs {};
    if (::statvfs(dir.c_str(), &vfs) != 0)
        fail(errno == ENOENT ? pool_errc::not_found : pool_errc::io, path,
             "cannot use directory '" + dir.string() + "': " + errno_text(errno));
    const std::uint64_t avail = std::uint64_t{vfs.f_bavail} * vfs.f_frsize;
    if (size > avail)
        fail(pool_errc::size_too_large, path,
             "size " + bytes_text(size) + " does not fit: the file system has " + bytes_text(avail) +
                 " free");

    // Build the file under a temporary name; link it into place only when complete.
    const auto tmp = path.string() + ".creating." + std::to_string(::getpid());
    fd_guard fd{::open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644)};
    if (fd.fd < 0) fail(pool_errc::io, path, "cannot create '" + tmp + "': " + errno_text(errno));
    auto remove_tmp = [&] { ::unlink(tmp.c_str()); };
    if (int err = ::posix_fallocate(fd.fd, 0, static_cast<off_t>(size)); err != 0) {
        remove_tmp();
        fail(err == ENOSPC ? pool_errc::size_too_large : pool_errc::io, path,
             "cannot reserve " + bytes_text(size) + ": " + errno_text(err));
    }
    pool_header h{};
    h.identity.magic = pool_magic;
    h.identity.version = pool_format_version;
    h.identity.header_size = pool_header_size;
    h.identity.pool_size = size;
    h.identity.uuid = random_uuid();
    std::memcpy(h.identity.layout.data(), layout.data(), layout.size());
    h.identity.created_unix_ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::system_clock::now().time_since_epoch())
            .count());
    h.identity.checksum = identity_checksum(h.identity);
    h.state.data_top = pool_header_size;
    h.state.clean_shutdown = 1;
    if (::pwrite(fd.fd, &h, sizeof h, 0) != static_cast<ssize_t>(sizeof h) || ::fsync(fd.fd) != 0) {
        int err = errno;
        remove_tmp();
        fail(pool_errc::io, path, "cannot write the header: " + errno_text(err));
    }
    if (::link(tmp.c_str(), path.c_str()) != 0) {
        int err = errno;
        remove_tmp();
        fail(err == EEXIST ? pool_errc::already_exists : pool_errc::io, path,
             err == EEXIST ? "a file appeared at this path while creating; not overwritten"
                           : "cannot link the new pool into place: " + errno_text(err));
    }
    remove_tmp();
    return open(path, layout);
}

pool pool::open(const std::filesystem::path& name, std::string_view layout) {
    return open_validated(resolve_pool_path(name), &layout, /*read_only=*/false);
}

pool pool::inspect(const std::filesystem::path& name) {
    return open_validated(resolve_pool_path(name), nullptr, /*read_only=*/true);
}

pool pool::open_validated(const std::filesystem::path& path, const std::string_view* layout,
                          bool read_only) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        fail(errno == ENOENT ? pool_errc::not_found : pool_errc::io, path,
             errno == ENOENT ? "no such file; create it with `ferrite pool create`"
                             : "cannot stat: " + errno_text(errno));
    if (!S_ISREG(st.st_mode)) fail(pool_errc::not_a_file, path, "not a regular file");

    // Validate through a read-only descriptor: nothing below can modify the file.
    fd_guard rfd{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (rfd.fd < 0) fail(pool_errc::io, path, "cannot open: " + errno_text(errno));
    if (::flock(rfd.fd, (read_only ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0)
        fail(errno == EWOULDBLOCK ? pool_errc::locked : pool_errc::io, path,
             errno == EWOULDBLOCK
                 ? "pool is in use by another process (or another open pool object); close "
                   "it there first"
                 : "cannot lock: " + errno_text(errno));
    if (::fstat(rfd.fd, &st) != 0) fail(pool_errc::io, path, "cannot stat: " + errno_text(errno));
    const auto file_size = static_cast<std::uint64_t>(st.st_size);
    if (file_size == 0)
        fail(pool_errc::empty, path,
             "file is empty (0 bytes): not a pool; remove it and create the pool again");
    if (file_size < pool_header_size)
        fail(pool_errc::truncated, path,
             "file is truncated (" + std::to_string(file_size) + " bytes, shorter than the " +
                 std::to_string(pool_header_size) + "-byte header)");
    pool_header h;
    if (::pread(rfd.fd, &h, sizeof h, 0) != static_cast<ssize_t>(sizeof h))
        fail(pool_errc::io, path, "cannot read the header: " + errno_text(errno));
    validate_header(h, file_size, layout, path);

    // Valid: map it. For read-write we need a writable descriptor; the lock moves with it
    // (we take it on the new descriptor before dropping the old one).
    fd_guard fd;
    if (read_only) {
        fd.fd = rfd.release();
    } else {
        fd.fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
        if (fd.fd < 0) fail(pool_errc::io, path, "cannot open for writing: " + errno_text(errno));
        ::close(rfd.release());  // drops the validation lock; take it again on fd below
        if (::flock(fd.fd, LOCK_EX | LOCK_NB) != 0)
            fail(pool_errc::locked, path,
                 "pool was locked by another process while opening; close it there first");
    }
    auto m = map_with_pmem2(fd.fd, read_only, path);

    pool p;
    p.path_ = path;
    p.fd_ = fd.release();
    p.map_ = m.map;
    p.base_ = static_cast<std::byte*>(m.addr);
    p.size_ = h.identity.pool_size;
    p.granularity_ = m.gran;
    p.dax_ = file_is_dax(p.fd_);
    p.read_only_ = read_only;
    p.was_clean_ = h.state.clean_shutdown == 1;
    if (!read_only) {
        // From here until close(), a crash leaves the flag at 0.
        p.header().state.clean_shutdown = 0;
        pwb(&p.header().state.clean_shutdown);
        pfence();
    }
    return p;
}

pool::pool(pool&& o) noexcept { *this = std::move(o); }

pool& pool::operator=(pool&& o) noexcept {
    if (this != &o) {
        close();
        path_ = std::move(o.path_);
        fd_ = std::exchange(o.fd_, -1);
        map_ = std::exchange(o.map_, nullptr);
        base_ = std::exchange(o.base_, nullptr);
        size_ = std::exchange(o.size_, 0);
        granularity_ = o.granularity_;
        read_only_ = o.read_only_;
        dax_ = o.dax_;
        was_clean_ = o.was_clean_;
    }
    return *this;
}

pool::~pool() { close(); }

void pool::close() noexcept {
    if (!base_) return;
    if (!read_only_) {
        // Every write of a well-behaved program is durable by now (each operation fenced);
        // the flag is the last store of the session.
        header().state.clean_shutdown = 1;
        pwb(&header().state.clean_shutdown);
        psync();
    }
    release();
}

void pool::release() noexcept {
    if (map_) {
        auto* m = static_cast<pmem2_map*>(map_);
        pmem2_map_delete(&m);
        map_ = nullptr;
    }
    base_ = nullptr;
    if (fd_ >= 0) ::close(std::exchange(fd_, -1));  // also releases the flock
}

std::uint64_t pool::used() const noexcept { return state().data_top; }

bool pool::contains(const void* p, std::size_t n) const noexcept {
    auto a = reinterpret_cast<std::uintptr_t>(p);
    auto b = reinterpret_cast<std::uintptr_t>(base_);
    return a >= b && n <= size_ && a - b <= size_ - n;
}

void pool::register_heap(std::uint64_t offset) { register_offset(&pool_state::heap_offset, "heap", offset); }

void pool::register_catalog(std::uint64_t offset) {
    register_offset(&pool_state::catalog_offset, "catalog", offset);
}

// One aligned word of the state line: the structure it names is formatted and durable
// already, so persisting the word is the structure's commit point.
void pool::register_offset(std::uint64_t pool_state::*field, const char* what, std::uint64_t offset) {
    if (read_only_)
        throw usage_error("pool '" + path_.string() + "' is open read-only: cannot register a " + what);
    auto& word = header().state.*field;
    if (offset < pool_header_size || offset >= size_)
        throw usage_error(std::string(what) + " offset " + std::to_string(offset) +
                          " is not inside the pool's data area");
    if (word != 0 && word != offset)
        throw usage_error("pool '" + path_.string() + "' already has a " + what + " at offset " +
                          std::to_string(word) + "; a pool registers one " + what);
    word = offset;
    pwb(&word);
    pfence();  // PP: the registration is durable
}

void* pool::root_bytes(std::size_t bytes, std::size_t alignment) {
    if (bytes == 0) throw usage_error("root object size must be positive");
    if (alignment == 0 || alignment > 64 || (alignment & (alignment - 1)) != 0)
        throw usage_error("root alignment must be a power of two up to 64");
    auto& st = header().state;
    if (st.root_offset != 0) {
        if (st.root_size != bytes)
            fail(pool_errc::root_mismatch, path_,
                 "root object has " + std::to_string(st.root_size) + " bytes, requested " +
                     std::to_string(bytes) + "; open the pool with the type that created it");
        return base_ + st.root_offset;
    }
    if (read_only_)
        fail(pool_errc::root_mismatch, path_, "pool has no root object yet (opened read-only)");
    const std::uint64_t off = (st.data_top + 63) & ~std::uint64_t{63};
    if (off > size_ || bytes > size_ - off)
        fail(pool_errc::out_of_space, path_,
             "root object of " + std::to_string(bytes) + " bytes does not fit; create a larger pool");
    // Zero and persist the object before publishing it (PP), then commit root_offset last:
    // size and top share its cache line and were stored before it (axiom 1).
    std::memset(base_ + off, 0, bytes);
    pwb_range(base_ + off, bytes);
    pfence();
    st.root_size = bytes;
    st.data_top = off + bytes;
    st.root_offset = off;  // LP/PP: the root exists once this line is durable
    pwb(&st.root_offset);
    pfence();
    return base_ + off;
}

}  // namespace ferrite::pmem
