// Every way pool::create / open / inspect refuses bad input (pool.hpp, error.hpp): each case
// throws pool_error with its pool_errc kind and a message naming the path, and a failed call
// leaves the file byte-for-byte as it was (or absent, if it was absent).
#include <sys/statvfs.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferrite/error.hpp"
#include "ferrite/pmem/pool.hpp"
#include "ferrite/pmem/pool_header.hpp"
#include "test_support.hpp"

namespace pm = ferrite::pmem;
namespace fs = std::filesystem;
using ferrite::pool_errc;
using ferrite_test::read_file;
using ferrite_test::read_header;
using ferrite_test::write_file;
using ferrite_test::write_header;
using ferrite_test::write_header_with_checksum;

namespace {

constexpr std::string_view layout = "test-v1";

// What is at a path: its type and, for a regular file, every byte.
struct file_snapshot {
    fs::file_type type;
    std::optional<std::vector<char>> bytes;
    bool operator==(const file_snapshot&) const = default;
};

file_snapshot snapshot(const fs::path& p) {
    std::error_code ec;
    return {fs::symlink_status(p, ec).type(), read_file(p)};
}

// Run `call` (a create, open or inspect of `path`) and expect pool_error(kind) whose message
// names the path, with the file at `path` unchanged.
template <class F>
void expect_pool_error(pool_errc kind, const fs::path& path, F&& call, std::string_view what) {
    const file_snapshot before = snapshot(path);
    try {
        (void)call();
        ADD_FAILURE() << what << " " << path << ": expected pool_error(" << ferrite::to_string(kind)
                      << "), nothing was thrown";
    } catch (const ferrite::pool_error& e) {
        const std::string message = e.what();
        EXPECT_EQ(ferrite::to_string(e.kind()), ferrite::to_string(kind)) << what << ": " << message;
        EXPECT_FALSE(message.empty());
        EXPECT_NE(message.find(path.string()), std::string::npos)
            << what << ": message does not name the path: " << message;
    }
    EXPECT_TRUE(snapshot(path) == before) << what << " " << path << ": a failed call changed the file";
}

void expect_open_fails(pool_errc kind, const fs::path& path) {
    expect_pool_error(kind, path, [&] { return pm::pool::open(path, layout); }, "open");
}

void expect_open_and_inspect_fail(pool_errc kind, const fs::path& path) {
    expect_open_fails(kind, path);
    expect_pool_error(kind, path, [&] { return pm::pool::inspect(path); }, "inspect");
}

void expect_create_fails(pool_errc kind, const fs::path& path, std::string_view layout_name,
                         std::uint64_t size) {
    expect_pool_error(kind, path, [&] { return pm::pool::create(path, layout_name, size); }, "create");
}

class PoolBadInputTest : public ferrite_test::pool_dir_test {
protected:
    // A valid pool with a root, closed cleanly; returns its path.
    fs::path make_pool(const std::string& name, std::uint64_t size = pm::min_pool_size) {
        const auto path = file(name);
        auto p = pm::pool::create(path, layout, size);
        p.root<std::uint64_t>() = 42;
        p.close();
        return path;
    }
    // Only the expected entries are in the pool directory (no temporary files left behind).
    void expect_directory_holds(std::vector<std::string> names) const {
        std::vector<std::string> found;
        for (const auto& entry : fs::directory_iterator(dir()))
            found.push_back(entry.path().filename().string());
        std::sort(found.begin(), found.end());
        std::sort(names.begin(), names.end());
        EXPECT_EQ(found, names);
    }
};

TEST_F(PoolBadInputTest, MissingFileIsNotFound) {
    expect_open_and_inspect_fail(pool_errc::not_found, file("missing"));
    expect_open_and_inspect_fail(pool_errc::not_found, file("no-such-dir") / "missing");
    expect_directory_holds({});
}

TEST_F(PoolBadInputTest, DirectoryIsNotAFile) {
    fs::create_directory(file("d"));
    expect_open_and_inspect_fail(pool_errc::not_a_file, file("d"));
    EXPECT_TRUE(fs::is_directory(file("d")));
}

TEST_F(PoolBadInputTest, EmptyFileIsEmpty) {
    write_file(file("e"), {});
    expect_open_and_inspect_fail(pool_errc::empty, file("e"));
}

TEST_F(PoolBadInputTest, ShorterThanAHeaderIsTruncated) {
    const auto good = make_pool("good");
    const auto pristine = *read_file(good);
    const auto path = file("short");
    for (std::size_t n : {std::size_t{1}, std::size_t{100}, pm::pool_header_size - 1}) {
        SCOPED_TRACE("first " + std::to_string(n) + " bytes of a pool");
        const auto end = pristine.begin() + static_cast<std::ptrdiff_t>(n);
        write_file(path, std::vector<char>(pristine.begin(), end));
        expect_open_and_inspect_fail(pool_errc::truncated, path);
    }
    write_file(path, std::vector<char>(100, 'x'));
    expect_open_and_inspect_fail(pool_errc::truncated, path);
}

TEST_F(PoolBadInputTest, ShorterThanThePoolSizeIsTruncated) {
    const auto path = make_pool("p");
    const auto pristine = *read_file(path);
    for (std::uint64_t n : {std::uint64_t{pm::pool_header_size}, pm::min_pool_size / 2,
                            pm::min_pool_size - 1}) {
        SCOPED_TRACE("truncated to " + std::to_string(n) + " bytes");
        write_file(path, pristine);
        fs::resize_file(path, n);
        expect_open_and_inspect_fail(pool_errc::truncated, path);
    }
}

TEST_F(PoolBadInputTest, LongerThanThePoolSizeIsCorrupted) {
    const auto path = make_pool("p");
    fs::resize_file(path, pm::min_pool_size + 4096);
    expect_open_and_inspect_fail(pool_errc::corrupted_header, path);
}

TEST_F(PoolBadInputTest, ForeignFileIsForeign) {
    const auto path = file("foreign");
    write_file(path, std::vector<char>(8192, 'x'));
    expect_open_and_inspect_fail(pool_errc::foreign, path);
    write_file(path, std::vector<char>(pm::min_pool_size, '\0'));
    expect_open_and_inspect_fail(pool_errc::foreign, path);

    const auto pool_path = make_pool("p");
    auto h = read_header(pool_path);
    h.identity.magic[0] = 'f';  // "fERRITE"
    write_header_with_checksum(pool_path, h);
    expect_open_and_inspect_fail(pool_errc::foreign, pool_path);
}

TEST_F(PoolBadInputTest, WrongVersionIsWrongVersion) {
    const auto path = make_pool("p");
    const auto pristine = *read_file(path);
    for (std::uint32_t v : {0u, pm::pool_format_version + 1, 0xffffffffu}) {
        SCOPED_TRACE("version " + std::to_string(v));
        write_file(path, pristine);
        auto h = read_header(path);
        h.identity.version = v;
        write_header_with_checksum(path, h);  // a well-formed header of another version
        expect_open_and_inspect_fail(pool_errc::wrong_version, path);
    }
}

TEST_F(PoolBadInputTest, WrongLayoutIsWrongLayout) {
    const auto path = make_pool("p");
    const auto before = *read_file(path);
    expect_pool_error(pool_errc::wrong_layout, path, [&] { return pm::pool::open(path, "other-v1"); },
                      "open");
    try {
        (void)pm::pool::open(path, "other-v1");
    } catch (const ferrite::pool_error& e) {
        EXPECT_NE(std::string(e.what()).find("test-v1"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("other-v1"), std::string::npos) << e.what();
    }
    // A header patched to another layout (valid checksum): open refuses, inspect accepts.
    auto h = read_header(path);
    h.identity.layout.fill('\0');
    const std::string other = "someone-else";
    std::copy(other.begin(), other.end(), h.identity.layout.begin());
    write_header_with_checksum(path, h);
    expect_open_fails(pool_errc::wrong_layout, path);
    const auto patched = read_file(path);
    {
        auto i = pm::pool::inspect(path);
        EXPECT_EQ(i.layout(), other);
    }
    EXPECT_TRUE(read_file(path) == patched);
    EXPECT_NE(*patched, before);
}

TEST_F(PoolBadInputTest, FlippedIdentityByteIsAChecksumMismatch) {
    const auto path = make_pool("p");
    const auto pristine = *read_file(path);
    using id = pm::pool_identity;
    // Every identity field after magic and version (those have their own kinds).
    const std::size_t offsets[] = {offsetof(id, header_size),     offsetof(id, pool_size),
                                   offsetof(id, pool_size) + 7,   offsetof(id, uuid) + 3,
                                   offsetof(id, layout),          offsetof(id, layout) + 40,
                                   offsetof(id, created_unix_ns), offsetof(id, reserved) + 10,
                                   offsetof(id, checksum),        offsetof(id, checksum) + 7};
    for (std::size_t off : offsets) {
        SCOPED_TRACE("byte " + std::to_string(off) + " flipped");
        auto bytes = pristine;
        bytes[off] = static_cast<char>(bytes[off] ^ 0x10);
        write_file(path, bytes);
        expect_open_and_inspect_fail(pool_errc::corrupted_header, path);
    }
}

TEST_F(PoolBadInputTest, MalformedIdentityWithValidChecksumIsCorrupted) {
    const auto path = make_pool("p");
    const auto pristine = *read_file(path);
    {
        SCOPED_TRACE("header_size 8192");
        auto h = read_header(path);
        h.identity.header_size = 8192;
        write_header_with_checksum(path, h);
        expect_open_and_inspect_fail(pool_errc::corrupted_header, path);
    }
    {
        SCOPED_TRACE("layout name without a terminating NUL");
        write_file(path, pristine);
        auto h = read_header(path);
        h.identity.layout.fill('L');
        write_header_with_checksum(path, h);
        expect_open_and_inspect_fail(pool_errc::corrupted_header, path);
    }
}

TEST_F(PoolBadInputTest, StateOutOfRangeIsCorrupted) {
    const auto path = make_pool("p");
    const auto pristine = *read_file(path);
    const auto good = read_header(path);
    ASSERT_EQ(good.state.root_offset, pm::pool_header_size);
    ASSERT_EQ(good.state.root_size, sizeof(std::uint64_t));
    ASSERT_EQ(good.state.data_top, pm::pool_header_size + 8);

    struct state_case {
        const char* what;
        void (*patch)(pm::pool_header&);
        const char* region;
    };
    // A roots entry: id << 48 | offset (pool_header.hpp).
    static constexpr auto entry = [](std::uint64_t id, std::uint64_t off) { return pm::root_entry(static_cast<pm::root_id>(id), off); };
    const state_case cases[] = {
        {"data_top beyond the pool", [](pm::pool_header& h) { h.state.data_top = pm::min_pool_size + 64; }, "header state"},
        {"data_top inside the header", [](pm::pool_header& h) { h.state.data_top = 100; }, "header state"},
        {"data_top 0, no root", [](pm::pool_header& h) { h.state.data_top = 0; h.state.root_offset = 0; }, "header state"},
        {"root inside the header", [](pm::pool_header& h) { h.state.root_offset = 64; }, "header state"},
        {"root beyond data_top", [](pm::pool_header& h) { h.state.root_offset = h.state.data_top + 64; }, "header state"},
        {"root size beyond data_top", [](pm::pool_header& h) { h.state.root_size = 4096; }, "header state"},
        {"root size beyond the pool", [](pm::pool_header& h) { h.state.root_size = pm::min_pool_size + 1; }, "header state"},
        {"root not 64-byte aligned", [](pm::pool_header& h) { h.state.root_offset += 8; h.state.root_size = 0; }, "header state"},
        {"unknown profile", [](pm::pool_header& h) { h.state.profile = 7; }, "header state"},
        {"clean flag neither 0 nor 1", [](pm::pool_header& h) { h.state.clean_shutdown = 2; }, "header state"},
        {"reserved word set", [](pm::pool_header& h) { h.state.reserved[1] = 1; }, "header state"},
        {"heap beyond data_top", [](pm::pool_header& h) { h.roots.entries[0] = entry(1, h.state.data_top + 64); }, "header roots"},
        {"heap inside the header", [](pm::pool_header& h) { h.roots.entries[0] = entry(1, 256); }, "header roots"},
        {"heap not aligned", [](pm::pool_header& h) { h.roots.entries[0] = entry(1, h.state.root_offset + 8); }, "header roots"},
        {"entry with id 0", [](pm::pool_header& h) { h.roots.entries[0] = h.state.root_offset; }, "header roots"},
        {"entry after an empty one", [](pm::pool_header& h) { h.roots.entries[1] = entry(1, h.state.root_offset); }, "header roots"},
        {"one id twice",
         [](pm::pool_header& h) {
             h.state.data_top += 4096;
             h.roots.entries[0] = entry(5, h.state.root_offset);
             h.roots.entries[1] = entry(5, h.state.root_offset + 64);
         }, "header roots"},
        {"two roots at one offset",
         [](pm::pool_header& h) {
             h.roots.entries[0] = entry(1, h.state.root_offset);
             h.roots.entries[1] = entry(7, h.state.root_offset);
         }, "header roots"},
        {"catalog without a heap", [](pm::pool_header& h) { h.roots.entries[0] = entry(2, h.state.root_offset); }, "header roots"},
        {"catalog before the heap",
         [](pm::pool_header& h) {
             h.state.data_top += 4096;
             h.roots.entries[0] = entry(1, h.state.root_offset + 64);
             h.roots.entries[1] = entry(2, h.state.root_offset);
         }, "header roots"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.what);
        write_file(path, pristine);
        auto h = good;
        c.patch(h);
        write_header(path, h);  // the state line and the roots table are not covered by the checksum
        expect_open_and_inspect_fail(pool_errc::damaged_state, path);
        try {
            (void)pm::pool::inspect(path);
        } catch (const ferrite::damaged_pool& e) {
            EXPECT_EQ(e.region(), c.region);
        }
    }
}

// Regression: root_offset + root_size wrapped around 2^64 and passed the range check in
// validate_header, so open handed out a root far outside the mapping.
TEST_F(PoolBadInputTest, StateWithWrappingRootIsCorrupted) {
    const auto path = make_pool("p");
    auto h = read_header(path);
    h.state.root_offset = std::numeric_limits<std::uint64_t>::max() - 63;  // 2^64 - 64
    h.state.root_size = 128;                                                // end wraps to 64
    write_header(path, h);
    expect_open_and_inspect_fail(pool_errc::damaged_state, path);
}

TEST_F(PoolBadInputTest, OpenPoolIsLocked) {
    const auto path = make_pool("p");
    {
        auto p = pm::pool::open(path, layout);
        expect_open_fails(pool_errc::locked, path);  // same process, second pool object
        expect_pool_error(pool_errc::locked, path, [&] { return pm::pool::inspect(path); }, "inspect");
        EXPECT_TRUE(p.is_open());
        EXPECT_EQ(p.root<std::uint64_t>(), 42u);
    }
    {
        auto i = pm::pool::inspect(path);
        expect_open_fails(pool_errc::locked, path);  // readers keep writers out
    }
    auto p = pm::pool::open(path, layout);  // and nothing stays locked afterwards
    EXPECT_TRUE(p.was_clean_at_open());
}

TEST_F(PoolBadInputTest, CreateNeverOverwrites) {
    const auto pool_path = make_pool("p");
    expect_create_fails(pool_errc::already_exists, pool_path, layout, pm::min_pool_size);
    write_file(file("plain"), {'h', 'i'});
    expect_create_fails(pool_errc::already_exists, file("plain"), layout, pm::min_pool_size);
    write_file(file("empty"), {});
    expect_create_fails(pool_errc::already_exists, file("empty"), layout, pm::min_pool_size);
    fs::create_directory(file("d"));
    expect_create_fails(pool_errc::already_exists, file("d"), layout, pm::min_pool_size);
    fs::create_symlink(file("nowhere"), file("dangling"));
    expect_create_fails(pool_errc::already_exists, file("dangling"), layout, pm::min_pool_size);
    EXPECT_FALSE(fs::exists(file("nowhere"))) << "create followed a dangling symlink";
    expect_directory_holds({"p", "plain", "empty", "d", "dangling"});
    auto p = pm::pool::open(pool_path, layout);
    EXPECT_EQ(p.root<std::uint64_t>(), 42u);
}

TEST_F(PoolBadInputTest, CreateTooSmallIsSizeTooSmall) {
    for (std::uint64_t size : {std::uint64_t{0}, std::uint64_t{1}, pm::min_pool_size - 1}) {
        SCOPED_TRACE("size " + std::to_string(size));
        expect_create_fails(pool_errc::size_too_small, file("p"), layout, size);
    }
    expect_directory_holds({});
}

TEST_F(PoolBadInputTest, CreateTooLargeIsSizeTooLarge) {
    for (std::uint64_t size : {pm::max_pool_size + 1, pm::max_pool_size + 4096,
                               std::numeric_limits<std::uint64_t>::max()}) {
        SCOPED_TRACE("size " + std::to_string(size));
        expect_create_fails(pool_errc::size_too_large, file("p"), layout, size);
    }
    expect_directory_holds({});
}

TEST_F(PoolBadInputTest, CreateBeyondFreeSpaceIsSizeTooLarge) {
    struct statvfs vfs {};
    ASSERT_EQ(::statvfs(dir().c_str(), &vfs), 0);
    const std::uint64_t avail = std::uint64_t{vfs.f_bavail} * vfs.f_frsize;
    if (avail >= pm::max_pool_size) GTEST_SKIP() << "the file system has 1 TiB free";
    expect_create_fails(pool_errc::size_too_large, file("p"), layout, pm::max_pool_size);
    expect_directory_holds({});
}

TEST_F(PoolBadInputTest, BadLayoutNameIsRefused) {
    using namespace std::string_view_literals;
    const std::string too_long(pm::max_layout_name + 1, 'x');
    const std::string_view names[] = {""sv,          too_long,       "with space"sv, "tab\tbed"sv,
                                      "nul\0inside"sv, "caf\xc3\xa9"sv, "del\x7f"sv,    "line\n"sv};
    for (std::string_view name : names) {
        SCOPED_TRACE("layout of " + std::to_string(name.size()) + " bytes");
        expect_create_fails(pool_errc::bad_layout_name, file("p"), name, pm::min_pool_size);
    }
    expect_directory_holds({});
}

TEST_F(PoolBadInputTest, CreateInMissingDirectoryIsNotFound) {
    expect_create_fails(pool_errc::not_found, file("no-such-dir") / "p", layout, pm::min_pool_size);
    expect_directory_holds({});
}

TEST(PoolErrcNames, EveryKindHasAName) {
    const pool_errc kinds[] = {
        pool_errc::not_found,       pool_errc::not_a_file,     pool_errc::empty,
        pool_errc::truncated,       pool_errc::foreign,        pool_errc::wrong_version,
        pool_errc::wrong_layout,    pool_errc::corrupted_header, pool_errc::locked,
        pool_errc::already_exists,  pool_errc::size_too_small, pool_errc::size_too_large,
        pool_errc::bad_layout_name, pool_errc::root_mismatch,  pool_errc::out_of_space,
        pool_errc::io};
    std::vector<std::string_view> names;
    for (pool_errc k : kinds) {
        const auto name = ferrite::to_string(k);
        EXPECT_FALSE(name.empty());
        EXPECT_NE(name, "?");
        for (auto seen : names) EXPECT_NE(seen, name);
        names.push_back(name);
    }
    EXPECT_EQ(ferrite::to_string(pool_errc::corrupted_header), "corrupted_header");
    const ferrite::pool_error e(pool_errc::locked, "pool 'x': locked");
    EXPECT_EQ(e.kind(), pool_errc::locked);
    EXPECT_STREQ(e.what(), "pool 'x': locked");
    const ferrite::error& base = e;  // pool_error is a ferrite::error is a std::runtime_error
    EXPECT_STREQ(base.what(), "pool 'x': locked");
}

}  // namespace
