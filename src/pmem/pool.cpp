// Pool create / open / close (see ferrite/pmem/pool.hpp for the rules this file keeps).
#include "ferrite/pmem/pool.hpp"

#include <fcntl.h>
#include <libpmem2.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>  // renameat2

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "ferrite/pmem/backend.hpp"
#include "ferrite/pmem/pool_path.hpp"
#include "ferrite/pmem/primitives.hpp"
#include "ferrite/pmem/flow.hpp"

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

void delete_map(void* map) noexcept {
    if (map) {
        auto* m = static_cast<pmem2_map*>(map);
        pmem2_map_delete(&m);
    }
}

struct pmem2_mapping {
    pmem2_map* map = nullptr;
    void* addr = nullptr;
    enum granularity gran = granularity::page;
};

pmem2_mapping map_with_pmem2(int fd, bool read_only, bool private_copy, const std::filesystem::path& path) {
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
    if (rc == 0 && read_only) rc = pmem2_config_set_protection(cfg, PMEM2_PROT_READ);
    // A private copy is copy-on-write; a read-only mapping stays shared (PROT_READ guards it),
    // so that libpmem2 reports the granularity the file really has (a private mapping
    // always reports byte: nothing written to it persists).
    if (rc == 0 && private_copy) rc = pmem2_config_set_sharing(cfg, PMEM2_PRIVATE);
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
    if (!private_copy) detail::note_pool_granularity(m.gran);  // the platform's say in the backend (backend.hpp)
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

void validate_state(const pool_header& h, const std::filesystem::path& path);

// Validate a header read from a file of `file_size` bytes. `layout` == nullptr: any layout.
void validate_header(const pool_header& h, std::uint64_t file_size, const std::string_view* layout,
                     const std::filesystem::path& path) {
    const auto& id = h.identity;
    if (id.magic != pool_magic)
        fail(pool_errc::foreign, path,
             "not a ferrite pool (wrong magic bytes); check the path, ferrite never opens "
             "foreign files");
    if (id.version == 1)
        fail(pool_errc::wrong_version, path,
             "pool format version 1, this ferrite reads version " + std::to_string(pool_format_version) +
                 " only (version 2 keeps the heap and catalog in a table of registered roots, version 1 "
                 "in header words of their own) and does not upgrade pools: open it with a ferrite "
                 "release that reads version 1, or copy its data into a pool created by this one");
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
    validate_state(h, path);
    if (layout && id.layout_name() != *layout)
        fail(pool_errc::wrong_layout, path,
             "pool has layout '" + std::string(id.layout_name()) + "', expected '" +
                 std::string(*layout) + "'; open it with the program that created it");
}

// The roots table (pool_header.hpp): what is wrong with it, or "" if every entry is usable.
// Entries are used in order, each with a nonzero id and a 64-byte aligned offset inside the
// used data area; no id and no offset appears twice; a catalog needs a heap below it.
std::string roots_problem(const pool_roots& roots, std::uint64_t data_top) {
    bool seen_empty = false;
    for (std::size_t i = 0; i < max_roots; ++i) {
        const std::uint64_t e = roots.entries[i];
        const std::string entry = "roots entry " + std::to_string(i);
        if (e == 0) {
            seen_empty = true;
            continue;
        }
        const root_id rid = root_entry_id(e);
        const std::uint64_t off = root_entry_offset(e);
        if (seen_empty) return entry + " (it follows an empty entry)";
        if (rid == 0) return entry + " (its id is 0)";
        if (off < pool_header_size || off >= data_top || off % 64 != 0)
            return entry + " (root id " + std::to_string(rid) + ": its offset)";
        for (std::size_t j = 0; j < i; ++j) {
            if (root_entry_id(roots.entries[j]) == rid) return entry + " (root id " + std::to_string(rid) + " twice)";
            if (root_entry_offset(roots.entries[j]) == off) return entry + " (two roots at one offset)";
        }
    }
    std::uint64_t heap = 0, catalog = 0;
    for (const std::uint64_t e : roots.entries) {
        if (root_entry_id(e) == root_ids::heap) heap = root_entry_offset(e);
        if (root_entry_id(e) == root_ids::catalog) catalog = root_entry_offset(e);
    }
    if (catalog != 0 && (heap == 0 || catalog <= heap)) return "the catalog root (it needs a heap below it)";
    return {};
}

// The state line's and the roots table's words against each other and the geometry (they
// are not checksummed: they change while the pool is open). Written without sums, which
// could wrap around.
void validate_state(const pool_header& h, const std::filesystem::path& path) {
    const auto& id = h.identity;
    const auto& st = h.state;
    bool root_ok = st.root_offset == 0 ||
                   (st.root_offset >= pool_header_size && st.root_offset <= st.data_top &&
                    st.root_size <= st.data_top - st.root_offset);
    const auto aligned = [](std::uint64_t off) { return off % 64 == 0; };
    std::string what;
    if (st.data_top < pool_header_size || st.data_top > id.pool_size) what = "the used size (data top)";
    else if (!root_ok || !aligned(st.root_offset)) what = "the root offset or size";
    else if (st.profile != 0 && st.profile != static_cast<std::uint64_t>(pool_profile::store))
        what = "the profile word";
    else if (st.clean_shutdown > 1) what = "the clean-shutdown flag";
    else if (st.reserved != decltype(st.reserved){}) what = "a reserved word";
    if (!what.empty())
        throw_damaged(pool_errc::damaged_state, "header state", "",
                      "pool '" + path.string() + "': " + what +
                          " is out of range; the header is damaged; restore the pool from a backup");
    what = roots_problem(h.roots, st.data_top);
    if (!what.empty())
        throw_damaged(pool_errc::damaged_state, "header roots", "",
                      "pool '" + path.string() + "': " + what +
                          " is out of range; the header is damaged; restore the pool from a backup");
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

// Temporary files of creates, in the pool's directory: a short hidden name (so that a pool
// name of up to NAME_MAX bytes works), used only where O_TMPFILE is not supported.
constexpr std::string_view temp_prefix = ".ferrite-creating-";

// The process `pid_text` (decimal) no longer exists; false for anything else.
bool process_gone(std::string_view pid_text) noexcept {
    if (pid_text.empty() || pid_text.size() > 9 || pid_text.find_first_not_of("0123456789") != std::string_view::npos)
        return false;
    pid_t pid = 0;
    for (const char c : pid_text) pid = pid * 10 + (c - '0');
    return pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH;
}

// Remove temporary files that no live create holds: ours (".ferrite-creating-<pid>-<hex>",
// flock'ed by their creator while it runs) once unlocked AND their creator's process is
// gone (between its open and its flock, a live create's file is unlocked: the pid keeps the
// sweep off it), and those of older versions ("<name>.creating.<pid>", whose pid is gone).
void sweep_orphans(const std::filesystem::path& dir) noexcept {
    DIR* d = ::opendir(dir.c_str());
    if (!d) return;
    while (const dirent* e = ::readdir(d)) {
        const std::string_view name = e->d_name;
        const auto full = dir / std::string(name);
        if (name.starts_with(temp_prefix)) {
            const auto rest = name.substr(temp_prefix.size());
            if (!process_gone(rest.substr(0, rest.find('-')))) continue;
            fd_guard fd{::open(full.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)};
            if (fd.fd >= 0 && ::flock(fd.fd, LOCK_EX | LOCK_NB) == 0) ::unlink(full.c_str());
            continue;
        }
        const auto at = name.rfind(".creating.");
        if (at == std::string_view::npos || at == 0) continue;
        if (process_gone(name.substr(at + 10))) ::unlink(full.c_str());
    }
    ::closedir(d);
}

// A new file in `dir` with no name yet (O_TMPFILE), or under a short temporary name that
// sweep_orphans() recognises; locked exclusively either way.
struct new_file {
    fd_guard fd;
    std::string temp_name;  // empty with O_TMPFILE
};

new_file make_unnamed_file(const std::filesystem::path& dir, const std::filesystem::path& path) {
    new_file f;
    if (!std::getenv("FERRITE_NO_TMPFILE"))  // tests force the fallback with it
        f.fd.fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
    if (f.fd.fd < 0) {
        std::array<std::uint8_t, 6> r{};
        if (::getrandom(r.data(), r.size(), 0) != static_cast<ssize_t>(r.size())) r.fill(0);
        std::string name(temp_prefix);
        name += std::to_string(::getpid()) + '-';
        for (auto b : r) name += "0123456789abcdef"[b >> 4], name += "0123456789abcdef"[b & 15];
        f.temp_name = (dir / name).string();
        f.fd.fd = ::open(f.temp_name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (f.fd.fd < 0)
            fail(pool_errc::io, path, "cannot create a temporary file in '" + dir.string() + "': " + errno_text(errno));
    }
    if (::flock(f.fd.fd, LOCK_EX | LOCK_NB) != 0) {
        int err = errno;
        if (!f.temp_name.empty()) ::unlink(f.temp_name.c_str());
        fail(pool_errc::io, path, "cannot lock the new file: " + errno_text(err));
    }
    return f;
}

// Give the finished file its name; false if a file appeared there meanwhile. A temporary
// name is moved (renameat2 RENAME_NOREPLACE: never over an existing file), so no instant
// shows both names; it is cleared then. With link() + unlink(), a kill between the two left
// the hidden name beside the pool, and the next run, an open, never swept it. Only a file
// system without RENAME_NOREPLACE gets link(); the caller's unlink() follows, and a kill
// between them leaves a hidden name that the next create in the directory removes.
bool link_into_place(int fd, std::string& temp_name, const std::filesystem::path& path) {
    int rc;
    if (temp_name.empty()) {
        const auto proc = "/proc/self/fd/" + std::to_string(fd);
        rc = ::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW);
    } else {
        rc = ::renameat2(AT_FDCWD, temp_name.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE);
        if (rc == 0) temp_name.clear();
        else if (errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP)
            rc = ::link(temp_name.c_str(), path.c_str());
    }
    if (rc == 0) return true;
    if (errno == EEXIST) return false;
    fail(pool_errc::io, path, "cannot link the new pool into place: " + errno_text(errno));
}

}  // namespace

namespace detail {
struct pool_core {
    std::filesystem::path path;
    int fd FERRITE_FLOW_SKIP = -1;
    bool owns_fd = true;        // false for a private copy (it shares its pool's descriptor)
    void* map FERRITE_FLOW_SKIP = nullptr;  // struct pmem2_map*
    std::byte* base = nullptr;
    std::uint64_t size = 0;
    enum granularity granularity = granularity::page;
    bool read_only = false;
    bool private_copy = false;
    bool dax = false;
    bool was_clean = false;
    bool in_use FERRITE_FLOW_SKIP = false;  // the clean flag was cleared: close() may set it again
    std::atomic<bool> recovered FERRITE_FLOW_SKIP{false};
    std::atomic<bool> open FERRITE_FLOW_SKIP{false};

    ~pool_core() { release(); }
    FERRITE_FLOW_SKIP void release() noexcept {  // volatile: unmaps, closes
        open.store(false, std::memory_order_release);
        delete_map(map);
        map = nullptr;
        base = nullptr;
        if (fd >= 0 && owns_fd) ::close(fd);  // also releases the flock
        fd = -1;
    }
};
}  // namespace detail

namespace {
const pool_header& closed_header() noexcept {
    static const pool_header zero{};
    return zero;
}
const std::filesystem::path& no_path() noexcept {
    static const std::filesystem::path empty;
    return empty;
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

// ---- pool_ref -----------------------------------------------------------------------------

bool pool_ref::is_open() const noexcept { return core_ && core_->open.load(std::memory_order_acquire); }

void pool_ref::require_open(std::string_view what) const {
    if (is_open()) return;
    throw usage_error(std::string(what) + ": the pool " +
                      (core_ ? "'" + core_->path.string() + "' was closed" : "is not open (moved from, or never opened)") +
                      "; keep the pool open while its heap and structures are in use");
}

const pool_header& pool_ref::header() const noexcept {
    return is_open() ? *reinterpret_cast<const pool_header*>(core_->base) : closed_header();
}
pool_header& pool_ref::mutable_header() const noexcept { return *reinterpret_cast<pool_header*>(core_->base); }
std::byte* pool_ref::base() const noexcept { return is_open() ? core_->base : nullptr; }
std::uint64_t pool_ref::size() const noexcept { return is_open() ? core_->size : 0; }
const std::filesystem::path& pool_ref::path() const noexcept { return core_ ? core_->path : no_path(); }
granularity pool_ref::granularity() const noexcept { return core_ ? core_->granularity : granularity::page; }
bool pool_ref::is_dax() const noexcept { return core_ && core_->dax; }
bool pool_ref::read_only() const noexcept { return core_ && core_->read_only; }
bool pool_ref::is_private_copy() const noexcept { return core_ && core_->private_copy; }
bool pool_ref::was_clean_at_open() const noexcept { return core_ && core_->was_clean; }
void pool_ref::mark_recovered() const noexcept {
    if (core_) core_->recovered.store(true, std::memory_order_release);
}

bool pool_ref::contains(const void* p, std::size_t n) const noexcept {
    if (!is_open()) return false;
    auto a = reinterpret_cast<std::uintptr_t>(p);
    auto b = reinterpret_cast<std::uintptr_t>(core_->base);
    return a >= b && n <= core_->size && a - b <= core_->size - n;
}

std::uint64_t pool_ref::root_offset(root_id id) const noexcept {
    if (id == 0) return 0;
    for (const std::uint64_t e : header().roots.entries)
        if (e != 0 && root_entry_id(e) == id) return root_entry_offset(e);
    return 0;
}

FERRITE_FLOW_ROOT void pool_ref::set_profile(pool_profile p) const {
    require_open("set_profile");
    if (core_->read_only) throw usage_error("pool '" + core_->path.string() + "' is open read-only: cannot set its profile");
    auto& word = mutable_header().state.profile;
    if (word == static_cast<std::uint64_t>(p)) return;
    if (word != 0)
        throw usage_error("pool '" + core_->path.string() + "' already has a profile; it is set once");
    word = static_cast<std::uint64_t>(p);
    pwb(&word);
    pfence();  // PP: durable before the heap or catalog roots entry it announces
}

// One entry of the roots table, id and offset in one aligned word: the structure it names is
// formatted and durable already, so persisting the word is the structure's commit point.
FERRITE_FLOW_ROOT void pool_ref::register_root(root_id id, std::uint64_t offset, std::string_view what_) const {
    const std::string what(what_);
    require_open("register a " + what);
    auto& c = *core_;
    if (c.read_only)
        throw usage_error("pool '" + c.path.string() + "' is open read-only: cannot register a " + what);
    if (id == 0) throw usage_error("root id 0 is reserved (it marks an empty entry); register a " + what + " with an id from 1");
    auto& h = mutable_header();
    if (offset < pool_header_size || offset >= h.state.data_top || offset % 64 != 0)
        throw usage_error(what + " offset " + std::to_string(offset) +
                          " is not a 64-byte aligned offset inside the pool's allocated data area (put it "
                          "inside the pool's root)");
    std::uint64_t* free_entry = nullptr;
    for (auto& e : h.roots.entries) {
        if (e == 0) {
            if (!free_entry) free_entry = &e;
            continue;
        }
        if (root_entry_id(e) == id && root_entry_offset(e) == offset) return;  // registered already
        if (root_entry_id(e) == id)
            throw usage_error("pool '" + c.path.string() + "' already has a " + what + " (root id " +
                              std::to_string(id) + ") at offset " + std::to_string(root_entry_offset(e)) +
                              "; a pool registers one " + what);
        if (root_entry_offset(e) == offset)
            throw usage_error("pool '" + c.path.string() + "': offset " + std::to_string(offset) +
                              " is registered already as root id " + std::to_string(root_entry_id(e)) +
                              "; a " + what + " needs a place of its own");
    }
    if (!free_entry)
        throw usage_error("pool '" + c.path.string() + "': its roots table is full (" + std::to_string(max_roots) +
                          " entries); cannot register a " + what + ": keep it inside a registered structure");
    *free_entry = root_entry(id, offset);  // one aligned 8-byte store: whole or absent after a crash
    pwb(free_entry);
    pfence();  // PP: the registration is durable
}

// ---- pool ---------------------------------------------------------------------------------

pool pool::create(const std::filesystem::path& name, std::string_view layout, std::uint64_t size,
                  const std::function<void(pool&)>& initialise) {
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
    sweep_orphans(dir);
    if (size > avail)
        fail(pool_errc::size_too_large, path,
             "size " + bytes_text(size) + " does not fit: the file system has " + bytes_text(avail) +
                 " free");

    // Build the whole pool in a file with no name (or a temporary one); name it when complete.
    auto f = make_unnamed_file(dir, path);
    auto remove_tmp = [&] {
        if (!f.temp_name.empty()) ::unlink(f.temp_name.c_str());
    };
    if (int err = ::posix_fallocate(f.fd.fd, 0, static_cast<off_t>(size)); err != 0) {
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
    if (::pwrite(f.fd.fd, &h, sizeof h, 0) != static_cast<ssize_t>(sizeof h)) {
        int err = errno;
        remove_tmp();
        fail(pool_errc::io, path, "cannot write the header: " + errno_text(err));
    }
    pool p;
    try {
        auto m = map_with_pmem2(f.fd.fd, false, false, path);
        auto core = std::make_shared<detail::pool_core>();
        core->path = path;
        core->fd = f.fd.release();
        core->map = m.map;
        core->base = static_cast<std::byte*>(m.addr);
        core->size = size;
        core->granularity = m.gran;
        core->dax = file_is_dax(core->fd);
        core->was_clean = true;
        core->open.store(true, std::memory_order_release);
        p = pool(std::move(core));
        p.mark_in_use();
        if (initialise) initialise(p);
        if (::fsync(p.core_->fd) != 0)  // page-granularity files: make the mapping's stores durable
            fail(pool_errc::io, path, "cannot sync the new pool: " + errno_text(errno));
    } catch (...) {
        remove_tmp();
        throw;  // p's close() writes only to the unnamed file, which disappears with it
    }
    bool linked = false;
    try {
        linked = link_into_place(p.core_->fd, f.temp_name, path);
    } catch (...) {
        p.close();
        remove_tmp();
        throw;
    }
    remove_tmp();  // the pool keeps its descriptor, its lock and its mapping
    if (!linked) {
        p.close();
        fail(pool_errc::already_exists, path, "a file appeared at this path while creating; not overwritten");
    }
    return p;
}
FERRITE_FLOW_ROOT void* pool_ref::root_bytes(std::size_t bytes, std::size_t alignment) const {
    require_open("root_bytes");
    if (bytes == 0) throw usage_error("root object size must be positive");
    if (alignment == 0 || alignment > 64 || (alignment & (alignment - 1)) != 0)
        throw usage_error("root alignment must be a power of two up to 64");
    auto& st = mutable_header().state;
    auto& c = *core_;
    if (st.root_offset != 0) {
        if (st.root_size != bytes)
            fail(pool_errc::root_mismatch, c.path,
                 "root object has " + std::to_string(st.root_size) + " bytes, requested " +
                     std::to_string(bytes) + "; open the pool with the type that created it");
        return c.base + st.root_offset;
    }
    if (c.read_only)
        fail(pool_errc::root_mismatch, c.path, "pool has no root object yet (opened read-only)");
    const std::uint64_t off = (st.data_top + 63) & ~std::uint64_t{63};
    if (off > c.size || bytes > c.size - off)
        fail(pool_errc::out_of_space, c.path,
             "root object of " + std::to_string(bytes) + " bytes does not fit; create a larger pool");
    // Zero and persist the object before publishing it (PP), then commit root_offset last:
    // size and top share its cache line and were stored before it (axiom 1).
    std::memset(c.base + off, 0, bytes);
    pwb_range(c.base + off, bytes);
    pfence();
    st.root_size = bytes;
    st.data_top = off + bytes;
    st.root_offset = off;  // LP/PP: the root exists once this line is durable
    pwb(&st.root_offset);
    pfence();
    return c.base + off;
}


pool pool::open(const std::filesystem::path& name, std::string_view layout) {
    return open_validated(resolve_pool_path(name), &layout, /*read_only=*/false, /*mark=*/true);
}

pool pool::open_unmarked(const std::filesystem::path& name, std::string_view layout) {
    return open_validated(resolve_pool_path(name), &layout, /*read_only=*/false, /*mark=*/false);
}

pool pool::inspect(const std::filesystem::path& name) {
    return open_validated(resolve_pool_path(name), nullptr, /*read_only=*/true, /*mark=*/false);
}

FERRITE_FLOW_ROOT void pool::mark_in_use() {
    require_open("mark_in_use");
    auto& c = *core_;
    if (c.read_only || c.in_use) return;
    // From here until close(), a crash leaves the flag at 0.
    auto& flag = mutable_header().state.clean_shutdown;
    flag = 0;
    pwb(&flag);
    pfence();
    c.in_use = true;
}

pool pool::open_validated(const std::filesystem::path& path, const std::string_view* layout,
                          bool read_only, bool mark) {
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
        // The header may have changed between the validation read and this lock.
        if (::pread(fd.fd, &h, sizeof h, 0) != static_cast<ssize_t>(sizeof h))
            fail(pool_errc::io, path, "cannot read the header: " + errno_text(errno));
        validate_header(h, file_size, layout, path);
    }
    auto m = map_with_pmem2(fd.fd, read_only, false, path);

    auto core = std::make_shared<detail::pool_core>();
    core->path = path;
    core->fd = fd.release();
    core->map = m.map;
    core->base = static_cast<std::byte*>(m.addr);
    core->size = h.identity.pool_size;
    core->granularity = m.gran;
    core->dax = file_is_dax(core->fd);
    core->read_only = read_only;
    core->was_clean = h.state.clean_shutdown == 1;
    core->open.store(true, std::memory_order_release);
    pool p(std::move(core));
    if (mark) p.mark_in_use();
    return p;
}

pool pool::private_copy() const {
    require_open("private_copy");
    const auto& c = *core_;
    auto m = map_with_pmem2(c.fd, false, true, c.path);
    auto core = std::make_shared<detail::pool_core>();
    core->path = c.path;
    core->fd = c.fd;
    core->owns_fd = false;
    core->map = m.map;
    core->base = static_cast<std::byte*>(m.addr);
    core->size = c.size;
    core->granularity = m.gran;
    core->dax = c.dax;
    core->private_copy = true;
    core->was_clean = c.was_clean;
    core->open.store(true, std::memory_order_release);
    return pool(std::move(core));
}

pool& pool::operator=(pool&& o) noexcept {
    if (this != &o) {
        close();
        core_ = std::move(o.core_);
    }
    return *this;
}

pool::~pool() { close(); }

FERRITE_FLOW_ROOT void pool::close() noexcept {
    if (!is_open()) return;
    auto& c = *core_;
    if (!c.read_only && !c.private_copy && c.in_use &&
        (c.was_clean || c.recovered.load(std::memory_order_acquire))) {
        // Every write of a well-behaved program is durable by now (each operation fenced);
        // the flag is the last store of the session.
        auto& flag = mutable_header().state.clean_shutdown;
        flag = 1;
        pwb(&flag);
        psync();
    }
    c.release();
}

}  // namespace ferrite::pmem
