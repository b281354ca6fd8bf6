// Pool lifecycle (pool.hpp) on valid files: create, the zero-filled root, write/close/reopen,
// reopening at a different address (data and offset_ptr still right), the clean-shutdown
// flag (crash = file copied while open), read-only inspect, root errors, used/contains, moves.
#include "ferrite/pmem/pool.hpp"

#include <sys/mman.h>

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "ferrite/error.hpp"
#include "ferrite/pmem/offset_ptr.hpp"
#include "ferrite/pmem/pool_header.hpp"
#include "ferrite/pmem/primitives.hpp"
#include "test_support.hpp"

namespace pm = ferrite::pmem;
namespace fs = std::filesystem;
using ferrite::pool_errc;
using ferrite_test::read_file;
using ferrite_test::read_header;

namespace {

constexpr std::uint64_t one_mib = 1u << 20;
constexpr const char* layout = "test-v1";

struct test_root {
    std::array<std::uint64_t, 16> words;
    pm::offset_ptr<std::uint64_t> last;
    std::array<char, 40> text;
    std::uint64_t committed;
};

// Fill the root through the primitives, as a program would, and make it durable.
void fill_root(test_root& r, std::uint64_t seed, std::size_t last_index) {
    for (std::size_t i = 0; i < r.words.size(); ++i) pm::nt_store(&r.words[i], seed * 1000 + i);
    const char text[] = "written with nt_memcpy, unaligned";
    pm::nt_memcpy(r.text.data() + 1, text, sizeof text);
    r.last = &r.words[last_index];
    pm::pwb(&r.last);
    pm::pfence();
    r.committed = seed;
    pm::pwb(&r.committed);
    pm::pfence();
}

void expect_filled(const test_root& r, std::uint64_t seed, std::size_t last_index) {
    for (std::size_t i = 0; i < r.words.size(); ++i) EXPECT_EQ(r.words[i], seed * 1000 + i) << i;
    EXPECT_STREQ(r.text.data() + 1, "written with nt_memcpy, unaligned");
    EXPECT_EQ(r.last.get(), &r.words[last_index]);
    EXPECT_EQ(*r.last, seed * 1000 + last_index);
    EXPECT_EQ(r.committed, seed);
}

std::vector<std::byte> bytes_of(const void* p, std::size_t n) {
    std::vector<std::byte> v(n);
    std::memcpy(v.data(), p, n);
    return v;
}

void expect_pool_error(pool_errc kind, const fs::path& path, auto&& f) {
    try {
        f();
        ADD_FAILURE() << "expected pool_error(" << ferrite::to_string(kind) << ")";
    } catch (const ferrite::pool_error& e) {
        EXPECT_EQ(e.kind(), kind) << ferrite::to_string(e.kind()) << ": " << e.what();
        EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    }
}

using PoolLifecycleTest = ferrite_test::pool_dir_test;

TEST_F(PoolLifecycleTest, CreateOpensAPoolWithAZeroFilledRoot) {
    const auto path = file("a");
    auto p = pm::pool::create(path, layout, one_mib);
    ASSERT_TRUE(p.is_open());
    EXPECT_EQ(p.path(), path);
    EXPECT_EQ(p.size(), one_mib);
    EXPECT_EQ(fs::file_size(path), one_mib);
    EXPECT_EQ(p.layout(), layout);
    EXPECT_FALSE(p.read_only());
    EXPECT_TRUE(p.was_clean_at_open());
    EXPECT_EQ(p.used(), pm::pool_header_size);
    EXPECT_EQ(p.identity().magic, pm::pool_magic);
    EXPECT_EQ(p.identity().version, pm::pool_format_version);
    EXPECT_EQ(p.identity().header_size, pm::pool_header_size);
    EXPECT_EQ(p.identity().pool_size, one_mib);
    EXPECT_EQ(p.identity().checksum, pm::identity_checksum(p.identity()));
    EXPECT_NE(p.identity().created_unix_ns, 0u);
    EXPECT_EQ(p.state().root_offset, 0u);
    EXPECT_EQ(p.state().clean_shutdown, 0u) << "the flag is cleared while the pool is open";
    EXPECT_FALSE(pm::to_string(p.granularity()).empty());
    EXPECT_NE(pm::to_string(p.granularity()), "?");

    auto& r = p.root<test_root>();
    const auto* rb = reinterpret_cast<const std::byte*>(&r);
    EXPECT_EQ(bytes_of(&r, sizeof r), std::vector<std::byte>(sizeof r)) << "root is not zero-filled";
    EXPECT_EQ(static_cast<std::size_t>(rb - p.base()), pm::pool_header_size);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&r) % 64, 0u);
    EXPECT_EQ(p.state().root_offset, pm::pool_header_size);
    EXPECT_EQ(p.state().root_size, sizeof(test_root));
    EXPECT_EQ(p.used(), pm::pool_header_size + sizeof(test_root));
    EXPECT_EQ(&p.root<test_root>(), &r) << "a second call returns the same object";
    EXPECT_EQ(p.root_bytes(sizeof(test_root), 8), &r);
}

TEST_F(PoolLifecycleTest, RootIsZeroFilledOverStaleBytes) {
    const auto path = file("a");
    pm::pool::create(path, layout, pm::min_pool_size).close();
    // Leftover bytes in the unused data area (a new file is zero, an old one need not be).
    const std::vector<char> junk(8192, '\xAB');
    ferrite_test::patch_file(path, static_cast<off_t>(pm::pool_header_size), junk.data(), junk.size());
    auto p = pm::pool::open(path, layout);
    auto& r = p.root<test_root>();
    EXPECT_EQ(bytes_of(&r, sizeof r), std::vector<std::byte>(sizeof r)) << "root is not zero-filled";
}

TEST_F(PoolLifecycleTest, SizeIsRoundedUpToWholePages) {
    auto p = pm::pool::create(file("a"), layout, pm::min_pool_size + 1);
    EXPECT_EQ(p.size(), pm::min_pool_size + 4096);
    EXPECT_EQ(fs::file_size(file("a")), pm::min_pool_size + 4096);
    auto q = pm::pool::create(file("b"), layout, pm::min_pool_size);
    EXPECT_EQ(q.size(), pm::min_pool_size);
}

TEST_F(PoolLifecycleTest, ContainsAndUsed) {
    auto p = pm::pool::create(file("a"), layout, pm::min_pool_size);
    const std::byte* b = p.base();
    const std::uint64_t n = p.size();
    EXPECT_TRUE(p.contains(b));
    EXPECT_TRUE(p.contains(b, n));
    EXPECT_FALSE(p.contains(b, n + 1));
    EXPECT_TRUE(p.contains(b + n - 1));
    EXPECT_FALSE(p.contains(b + n));
    EXPECT_TRUE(p.contains(b + n - 8, 8));
    EXPECT_FALSE(p.contains(b + n - 8, 16));
    EXPECT_FALSE(p.contains(b - 1));
    int local = 0;
    EXPECT_FALSE(p.contains(&local));
    auto& r = p.root<test_root>();
    EXPECT_TRUE(p.contains(&r, sizeof r));
    EXPECT_EQ(p.used(), pm::pool_header_size + sizeof(test_root));
}

TEST_F(PoolLifecycleTest, WriteCloseReopenKeepsTheBytes) {
    const auto path = file("a");
    std::vector<std::byte> snapshot;
    std::string uuid;
    std::uint64_t used = 0, root_offset = 0;
    {
        auto p = pm::pool::create(path, layout, one_mib);
        auto& r = p.root<test_root>();
        fill_root(r, 7, 15);
        expect_filled(r, 7, 15);
        snapshot = bytes_of(&r, sizeof r);
        uuid = p.identity().uuid_string();
        used = p.used();
        root_offset = p.state().root_offset;
        p.close();
        EXPECT_FALSE(p.is_open());
        p.close();  // idempotent
        EXPECT_FALSE(p.is_open());
    }
    auto p = pm::pool::open(path, layout);
    EXPECT_TRUE(p.was_clean_at_open());
    EXPECT_EQ(p.identity().uuid_string(), uuid);
    EXPECT_EQ(p.used(), used);
    EXPECT_EQ(p.state().root_offset, root_offset);
    auto& r = p.root<test_root>();
    EXPECT_EQ(bytes_of(&r, sizeof r), snapshot);
    expect_filled(r, 7, 15);
}

// Keeps [addr, addr + len) reserved so that nothing else can be mapped there.
struct placeholder {
    void* addr = nullptr;
    std::size_t len = 0;
    placeholder(void* want, std::size_t n) : len(n) {
        void* got = ::mmap(want, n, PROT_NONE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
        if (got != map_failed()) addr = got;
    }
    ~placeholder() {
        if (addr) ::munmap(addr, len);
    }
    static void* map_failed() { return reinterpret_cast<void*>(std::intptr_t{-1}); }  // MAP_FAILED
    placeholder(const placeholder&) = delete;
    placeholder& operator=(const placeholder&) = delete;
};

TEST_F(PoolLifecycleTest, ReopenAtADifferentAddressKeepsDataAndOffsetPointers) {
    const auto path = file("a");
    void* first_base = nullptr;
    std::uint64_t size = 0;
    {
        auto p = pm::pool::create(path, layout, one_mib);
        fill_root(p.root<test_root>(), 3, 7);
        first_base = p.base();
        size = p.size();
    }
    // The address of the first mapping is now taken: the reopen must map elsewhere.
    placeholder hold(first_base, static_cast<std::size_t>(size));
    ASSERT_EQ(hold.addr, first_base) << "could not reserve the first mapping's address";

    auto p = pm::pool::open(path, layout);
    ASSERT_NE(static_cast<void*>(p.base()), first_base);
    auto& r = p.root<test_root>();
    EXPECT_TRUE(p.contains(&r, sizeof r));
    expect_filled(r, 3, 7);
    EXPECT_TRUE(p.contains(r.last.get(), sizeof(std::uint64_t)));
}

TEST_F(PoolLifecycleTest, CopyOpenBesideTheOriginalResolvesIntoItsOwnMapping) {
    const auto path = file("a"), copy = file("b");
    {
        auto p = pm::pool::create(path, layout, one_mib);
        fill_root(p.root<test_root>(), 5, 2);
    }
    fs::copy_file(path, copy);
    auto p = pm::pool::open(path, layout);
    auto q = pm::pool::open(copy, layout);
    ASSERT_NE(p.base(), q.base());
    auto& rp = p.root<test_root>();
    auto& rq = q.root<test_root>();
    expect_filled(rp, 5, 2);
    expect_filled(rq, 5, 2);
    EXPECT_TRUE(q.contains(rq.last.get()));
    EXPECT_FALSE(p.contains(rq.last.get()));
    *rq.last = 99;  // writes go to the copy only
    EXPECT_EQ(rp.words[2], 5002u);
    EXPECT_EQ(p.identity().uuid_string(), q.identity().uuid_string()) << "a byte copy";
}

TEST_F(PoolLifecycleTest, CleanShutdownFlag) {
    const auto path = file("a"), crashed = file("crashed");
    {
        auto p = pm::pool::create(path, layout, one_mib);
        EXPECT_TRUE(p.was_clean_at_open()) << "a new pool starts clean";
        fill_root(p.root<test_root>(), 1, 0);
        EXPECT_EQ(read_header(path).state.clean_shutdown, 0u) << "open pools are marked unclean";
        // A crash image: the file's bytes while the pool is open.
        fs::copy_file(path, crashed);
        p.close();
        EXPECT_EQ(read_header(path).state.clean_shutdown, 1u);
    }
    EXPECT_EQ(read_header(crashed).state.clean_shutdown, 0u);
    {
        auto p = pm::pool::open(path, layout);
        EXPECT_TRUE(p.was_clean_at_open());
    }  // the destructor closes it cleanly
    {
        auto p = pm::pool::open(path, layout);
        EXPECT_TRUE(p.was_clean_at_open());
    }
    {
        auto c = pm::pool::open(crashed, layout);
        EXPECT_FALSE(c.was_clean_at_open()) << "a copy taken while open looks crashed";
        expect_filled(c.root<test_root>(), 1, 0);  // the data was durable before the crash
    }  // closed without declaring its recovery finished: it must not look clean
    EXPECT_EQ(read_header(crashed).state.clean_shutdown, 0u) << "a crashed pool is not marked clean unrecovered";
    {
        auto c = pm::pool::open(crashed, layout);
        EXPECT_FALSE(c.was_clean_at_open());
        c.mark_recovered();  // the program's recovery is done (catalog::recover_pool does this)
    }
    auto c = pm::pool::open(crashed, layout);
    EXPECT_TRUE(c.was_clean_at_open()) << "closed cleanly after recovery";
}

// open_unmarked() writes nothing until mark_in_use(); a failed open must not mark a crashed
// pool clean either (the destructor of a pool whose recovery never ran).
TEST_F(PoolLifecycleTest, OpenUnmarkedWritesNothingUntilMarkedInUse) {
    const auto path = file("u");
    { auto p = pm::pool::create(path, layout, one_mib); }
    const auto before = read_header(path);
    {
        auto p = pm::pool::open_unmarked(path, layout);
        EXPECT_EQ(read_header(path).state.clean_shutdown, 1u) << "unmarked: the flag is untouched";
    }
    const auto after = read_header(path);
    EXPECT_EQ(0, std::memcmp(&before, &after, sizeof before));
    {
        auto p = pm::pool::open_unmarked(path, layout);
        p.mark_in_use();
        EXPECT_EQ(read_header(path).state.clean_shutdown, 0u);
    }
    EXPECT_EQ(read_header(path).state.clean_shutdown, 1u);
}

// A private copy is writable, and nothing written there reaches the file.
TEST_F(PoolLifecycleTest, PrivateCopyNeverWritesTheFile) {
    const auto path = file("c");
    {
        auto p = pm::pool::create(path, layout, one_mib);
        fill_root(p.root<test_root>(), 1, 0);
    }
    const auto before = read_header(path);
    {
        auto p = pm::pool::inspect(path);
        auto copy = p.private_copy();
        EXPECT_TRUE(copy.is_private_copy());
        fill_root(copy.root<test_root>(), 7, 1);
        expect_filled(copy.root<test_root>(), 7, 1);
        copy.close();
        expect_filled(p.root<test_root>(), 1, 0);
    }
    auto again = pm::pool::open(path, layout);
    expect_filled(again.root<test_root>(), 1, 0);
    EXPECT_EQ(before.state.root_offset, again.state().root_offset);
}

// A pool handle may move: the pool_refs structures keep stay valid; after close() they
// report it instead of touching the unmapped range.
TEST_F(PoolLifecycleTest, RefsSurviveAMoveAndSeeTheClose) {
    auto p = pm::pool::create(file("m"), layout, one_mib);
    pm::pool_ref ref = p;
    auto moved = std::move(p);
    EXPECT_TRUE(ref.is_open());
    EXPECT_EQ(ref.base(), moved.base());
    EXPECT_FALSE(p.is_open());  // NOLINT(bugprone-use-after-move): the moved-from handle is closed
    EXPECT_THROW(p.require_open("test"), ferrite::usage_error);
    moved.close();
    EXPECT_FALSE(ref.is_open());
    EXPECT_THROW(ref.require_open("push_back"), ferrite::usage_error);
    EXPECT_THROW((void)ref.root_bytes(64), ferrite::usage_error);
}

TEST_F(PoolLifecycleTest, InspectIsReadOnly) {
    const auto path = file("a"), crashed = file("crashed");
    {
        auto p = pm::pool::create(path, layout, one_mib);
        fill_root(p.root<test_root>(), 4, 9);
        fs::copy_file(path, crashed);
    }
    const auto before = read_file(path);
    const auto crashed_before = read_file(crashed);
    ASSERT_TRUE(before && crashed_before);
    {
        auto i = pm::pool::inspect(path);
        EXPECT_TRUE(i.read_only());
        EXPECT_TRUE(i.was_clean_at_open());
        EXPECT_EQ(i.layout(), layout);
        EXPECT_EQ(i.state().clean_shutdown, 1u) << "inspect does not clear the flag";
        expect_filled(i.root<test_root>(), 4, 9);
        auto j = pm::pool::inspect(path);  // shared lock: several readers at once
        EXPECT_TRUE(j.is_open());
        EXPECT_EQ(i.identity().uuid_string(), j.identity().uuid_string());
    }
    EXPECT_TRUE(read_file(path) == before) << "inspect modified the pool file";
    for (int k = 0; k < 2; ++k) {
        auto i = pm::pool::inspect(crashed);
        EXPECT_FALSE(i.was_clean_at_open()) << "inspect must not repair the flag (round " << k << ")";
    }
    EXPECT_TRUE(read_file(crashed) == crashed_before);
    auto p = pm::pool::open(path, layout);  // nothing left locked
    EXPECT_TRUE(p.was_clean_at_open());
}

TEST_F(PoolLifecycleTest, InspectWithoutRootCannotCreateOne) {
    const auto path = file("a");
    pm::pool::create(path, layout, pm::min_pool_size).close();
    const auto before = read_file(path);
    auto i = pm::pool::inspect(path);
    expect_pool_error(pool_errc::root_mismatch, path, [&] { (void)i.root<test_root>(); });
    i.close();
    EXPECT_TRUE(read_file(path) == before);
}

TEST_F(PoolLifecycleTest, RootOfAnotherSizeIsRootMismatch) {
    const auto path = file("a");
    {
        auto p = pm::pool::create(path, layout, one_mib);
        (void)p.root<test_root>();
        expect_pool_error(pool_errc::root_mismatch, path, [&] { (void)p.root<std::uint64_t>(); });
        expect_pool_error(pool_errc::root_mismatch, path,
                          [&] { (void)p.root_bytes(sizeof(test_root) + 64); });
    }
    auto p = pm::pool::open(path, layout);
    expect_pool_error(pool_errc::root_mismatch, path, [&] { (void)p.root<std::array<char, 3>>(); });
    EXPECT_EQ(p.root_bytes(sizeof(test_root)), &p.root<test_root>());
}

TEST_F(PoolLifecycleTest, RootTooBigIsOutOfSpace) {
    const auto path = file("a");
    auto p = pm::pool::create(path, layout, pm::min_pool_size);
    expect_pool_error(pool_errc::out_of_space, path, [&] { (void)p.root_bytes(pm::min_pool_size); });
    expect_pool_error(pool_errc::out_of_space, path,
                      [&] { (void)p.root_bytes(pm::min_pool_size - pm::pool_header_size + 1); });
    EXPECT_EQ(p.state().root_offset, 0u) << "a failed root allocation left a root behind";
    EXPECT_EQ(p.used(), pm::pool_header_size);
    // The largest root that fits still does.
    void* r = p.root_bytes(pm::min_pool_size - pm::pool_header_size);
    EXPECT_EQ(r, p.base() + pm::pool_header_size);
    EXPECT_EQ(p.used(), p.size());
}

// Regression: root_bytes checked `off + bytes > size_`, which wrapped for a huge request, and
// memset ran off the mapping.
TEST_F(PoolLifecycleTest, HugeRootIsOutOfSpace) {
    const auto path = file("a");
    auto p = pm::pool::create(path, layout, pm::min_pool_size);
    expect_pool_error(pool_errc::out_of_space, path,
                      [&] { (void)p.root_bytes(std::numeric_limits<std::size_t>::max() - 4000); });
    EXPECT_EQ(p.state().root_offset, 0u);
}

TEST_F(PoolLifecycleTest, RootArgumentsAreChecked) {
    auto p = pm::pool::create(file("a"), layout, pm::min_pool_size);
    EXPECT_THROW((void)p.root_bytes(0), ferrite::usage_error);
    for (std::size_t alignment : {0u, 3u, 48u, 128u})
        EXPECT_THROW((void)p.root_bytes(64, alignment), ferrite::usage_error) << alignment;
    EXPECT_EQ(p.state().root_offset, 0u);
}

TEST_F(PoolLifecycleTest, MoveConstructionAndAssignment) {
    const auto pa = file("a"), pc = file("c");
    auto a = pm::pool::create(pa, layout, pm::min_pool_size);
    a.root<test_root>().committed = 11;
    std::byte* const base = a.base();

    pm::pool b(std::move(a));
    EXPECT_FALSE(a.is_open());  // NOLINT(bugprone-use-after-move): moved-from is closed
    a.close();                  // harmless on a moved-from pool
    ASSERT_TRUE(b.is_open());
    EXPECT_EQ(b.base(), base);
    EXPECT_EQ(b.path(), pa);
    EXPECT_EQ(b.root<test_root>().committed, 11u);

    auto c = pm::pool::create(pc, layout, pm::min_pool_size);
    c = std::move(b);  // closes pool "c", takes pool "a"
    EXPECT_FALSE(b.is_open());  // NOLINT(bugprone-use-after-move)
    ASSERT_TRUE(c.is_open());
    EXPECT_EQ(c.base(), base);
    EXPECT_EQ(c.path(), pa);
    {
        auto reopened = pm::pool::open(pc, layout);  // "c" was closed (unlocked) by the move
        EXPECT_TRUE(reopened.was_clean_at_open());
    }

    pm::pool& alias = c;
    c = std::move(alias);  // self-move keeps the pool
    ASSERT_TRUE(c.is_open());
    EXPECT_EQ(c.base(), base);

    pm::pool d(std::move(a));  // NOLINT(bugprone-use-after-move): moving a closed pool
    EXPECT_FALSE(d.is_open());

    c.close();
    auto again = pm::pool::open(pa, layout);
    EXPECT_TRUE(again.was_clean_at_open());
    EXPECT_EQ(again.root<test_root>().committed, 11u);
}

TEST_F(PoolLifecycleTest, EachPoolGetsItsOwnVersion4Uuid) {
    auto a = pm::pool::create(file("a"), layout, pm::min_pool_size);
    auto b = pm::pool::create(file("b"), layout, pm::min_pool_size);
    const std::string ua = a.identity().uuid_string(), ub = b.identity().uuid_string();
    EXPECT_NE(ua, ub);
    ASSERT_EQ(ua.size(), 36u);
    EXPECT_EQ(ua[8], '-');
    EXPECT_EQ(ua[13], '-');
    EXPECT_EQ(ua[14], '4');
    EXPECT_EQ(ua[18], '-');
    EXPECT_EQ(ua[23], '-');
    EXPECT_TRUE(ua[19] == '8' || ua[19] == '9' || ua[19] == 'a' || ua[19] == 'b') << ua;
}

TEST_F(PoolLifecycleTest, LongestLayoutNameRoundTrips) {
    const std::string name(pm::max_layout_name, 'L');
    pm::pool::create(file("a"), name, pm::min_pool_size).close();
    auto p = pm::pool::open(file("a"), name);
    EXPECT_EQ(p.layout(), name);
}

}  // namespace

TEST_F(PoolLifecycleTest, RegisteredHeapOffsetIsPersistentAndValidated) {
    const auto path = file("h");
    {
        auto p = pm::pool::create(path, layout, pm::min_pool_size);
        (void)p.root_bytes(4096);
        EXPECT_EQ(p.heap_offset(), 0u);
        EXPECT_THROW(p.register_heap(64), ferrite::usage_error) << "inside the header";
        EXPECT_THROW(p.register_heap(p.size()), ferrite::usage_error) << "beyond the pool";
        p.register_heap(pm::pool_header_size);
        p.register_heap(pm::pool_header_size);  // the same again: fine
        EXPECT_THROW(p.register_heap(pm::pool_header_size + 64), ferrite::usage_error) << "a second heap";
    }
    auto again = pm::pool::open(path, layout);
    EXPECT_EQ(again.heap_offset(), pm::pool_header_size);
}

// The roots table (pool_header.hpp): any feature registers itself by id, the heap and the
// catalog are ids 1 and 2 of the same table, entries survive a reopen, and every misuse is a
// usage_error that writes nothing.
TEST_F(PoolLifecycleTest, RegisteredRootsArePersistentAndValidated) {
    const auto path = file("roots");
    const std::uint64_t at = pm::pool_header_size;
    {
        auto p = pm::pool::create(path, layout, pm::min_pool_size);
        (void)p.root_bytes(4096);
        EXPECT_EQ(p.root_offset(7), 0u);
        EXPECT_THROW(p.register_root(0, at), ferrite::usage_error) << "id 0 marks an empty entry";
        EXPECT_THROW(p.register_root(7, at + 8), ferrite::usage_error) << "not aligned";
        EXPECT_THROW(p.register_root(7, at + 4096), ferrite::usage_error) << "beyond the used area";
        p.register_heap(at);
        p.register_catalog(at + 64);
        p.register_root(7, at + 128, "checkpoint");
        p.register_root(7, at + 128, "checkpoint");  // the same again: fine
        EXPECT_THROW(p.register_root(7, at + 192), ferrite::usage_error) << "id 7 at another offset";
        EXPECT_THROW(p.register_root(9, at + 64), ferrite::usage_error) << "the catalog's offset";
        EXPECT_EQ(p.heap_offset(), at);
        EXPECT_EQ(p.catalog_offset(), at + 64);
        EXPECT_EQ(p.root_offset(pm::root_ids::catalog), at + 64);
        EXPECT_EQ(p.root_offset(7), at + 128);
        // Entries are used in order, one word each.
        EXPECT_EQ(p.roots().entries[0], pm::root_entry(pm::root_ids::heap, at));
        EXPECT_EQ(p.roots().entries[1], pm::root_entry(pm::root_ids::catalog, at + 64));
        EXPECT_EQ(p.roots().entries[2], pm::root_entry(7, at + 128));
        for (std::uint64_t i = 3; i < pm::max_roots; ++i) p.register_root(static_cast<pm::root_id>(100 + i), at + 64 * i);
        const auto full = p.roots().entries;
        EXPECT_THROW(p.register_root(99, at + 64 * pm::max_roots), ferrite::usage_error) << "the table is full";
        EXPECT_EQ(p.roots().entries, full);
    }
    {
        auto ro = pm::pool::inspect(path);
        EXPECT_EQ(ro.root_offset(7), at + 128);
        EXPECT_THROW(ro.register_root(8, at + 64 * 3), ferrite::usage_error) << "read-only";
    }
    auto again = pm::pool::open(path, layout);
    EXPECT_EQ(again.heap_offset(), at);
    EXPECT_EQ(again.catalog_offset(), at + 64);
    EXPECT_EQ(again.root_offset(7), at + 128);
    EXPECT_EQ(again.root_offset(100 + pm::max_roots - 1), at + 64 * (pm::max_roots - 1));
}
