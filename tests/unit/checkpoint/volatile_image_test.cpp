// volatile_image: the mapping at a chosen base (and its refusal of a taken range), eager
// loading over several threads, and lazy loading on first touch: the bytes read are the
// source's, only touched pages are loaded, each once even when 4 threads touch them first at
// the same time, writes stick, a fully loaded image is one mapping again, several images can
// be armed at once (and come and go while another loads), and a fault outside every image
// still reaches the previous handler.
// EagerVersusLazy prints the eager load time against the time to the first completed read
// after arming, for the docs (not asserted).
#include "ferrite/checkpoint/volatile_image.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ferrite/error.hpp"

namespace ferrite::checkpoint {
namespace {

std::uint64_t page_bytes() { return static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)); }

std::string hex(std::uintptr_t v) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(v));
    return buffer;
}

// A stand-in for the persistent image: every 8-byte word differs (by position and seed).
std::vector<std::byte> source_bytes(std::uint64_t bytes, std::uint64_t seed) {
    std::vector<std::byte> out(bytes);
    for (std::uint64_t i = 0; i + 8 <= bytes; i += 8) {
        std::uint64_t z = (i + seed * 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
        z ^= z >> 31;
        std::memcpy(out.data() + i, &z, 8);
    }
    return out;
}

// Mappings of this process that overlap [begin, end).
unsigned mappings_in(std::uintptr_t begin, std::uintptr_t end) {
    std::ifstream maps("/proc/self/maps");
    unsigned n = 0;
    for (std::string line; std::getline(maps, line);) {
        char* p = nullptr;
        const std::uintptr_t start = std::strtoull(line.c_str(), &p, 16);
        const std::uintptr_t stop = std::strtoull(p + 1, nullptr, 16);
        if (start < end && stop > begin) ++n;
    }
    return n;
}

bool page_equal(const volatile_image& image, const std::vector<std::byte>& source, std::uint64_t page) {
    const std::uint64_t p = page_bytes();
    return std::memcmp(image.data() + page * p, source.data() + page * p, p) == 0;
}

double ms_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// --- mapping -------------------------------------------------------------------------------

TEST(VolatileImage, MapsAtTheChosenBaseAndThereAgainAfterUnmapping) {
    const std::uint64_t p = page_bytes();
    std::uintptr_t base = 0;
    {
        auto image = volatile_image::map(0, 3 * p + 1);
        EXPECT_EQ(image.size(), 4 * p) << "rounded up to whole pages";
        base = image.base();
        ASSERT_NE(base, 0u);
        EXPECT_EQ(base % p, 0u);
        EXPECT_EQ(image.data(), reinterpret_cast<std::byte*>(base));
        image.data()[4 * p - 1] = std::byte{7};  // read-write, all of it
        volatile_image moved = std::move(image);
        EXPECT_EQ(image.data(), nullptr);
        EXPECT_EQ(image.size(), 0u);
        EXPECT_EQ(moved.base(), base);
        EXPECT_EQ(moved.data()[4 * p - 1], std::byte{7});
    }
    EXPECT_EQ(mappings_in(base, base + 4 * p), 0u) << "the destructor unmaps";
    auto again = volatile_image::map(base, 4 * p);
    EXPECT_EQ(again.base(), base);
    EXPECT_EQ(again.data()[4 * p - 1], std::byte{0}) << "a fresh mapping";
    volatile_image other = volatile_image::map(0, p);
    other = std::move(again);  // move-assignment unmaps what `other` held
    EXPECT_EQ(other.base(), base);
}

TEST(VolatileImage, ATakenRangeIsAPoolErrorThatNamesTheRangeAndWhatHoldsIt) {
    const std::uint64_t p = page_bytes();
    // Eight free pages, then one mapping of our own in the middle of them.
    void* area = ::mmap(nullptr, 8 * p, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(area, MAP_FAILED);
    const auto base = reinterpret_cast<std::uintptr_t>(area);
    ASSERT_EQ(::munmap(area, 4 * p), 0);
    ASSERT_EQ(::munmap(reinterpret_cast<void*>(base + 5 * p), 3 * p), 0);
    auto* held = reinterpret_cast<unsigned char*>(base + 4 * p);
    held[0] = 0xa5;
    try {
        auto image = volatile_image::map(base, 8 * p);
        ADD_FAILURE() << "mapped over a taken range";
    } catch (const pool_error& e) {
        EXPECT_EQ(e.kind(), pool_errc::io);
        const std::string what = e.what();
        EXPECT_NE(what.find("[" + hex(base) + ", " + hex(base + 8 * p) + ")"), std::string::npos) << what;
        EXPECT_NE(what.find("taken"), std::string::npos) << what;
        EXPECT_NE(what.find("[" + hex(base + 4 * p) + "-" + hex(base + 5 * p) + "] rw-p anonymous memory"),
                  std::string::npos)
            << what;
        EXPECT_NE(what.find("another base"), std::string::npos) << what;
    }
    EXPECT_EQ(held[0], 0xa5) << "what held the range is untouched";
    EXPECT_EQ(mappings_in(base, base + 4 * p), 0u) << "nothing was left mapped";
    ASSERT_EQ(::munmap(held, p), 0);

    // Over this program's own code: the message names the file that is mapped there.
    const auto code = reinterpret_cast<std::uintptr_t>(&page_bytes) / p * p;
    try {
        auto image = volatile_image::map(code, p);
        ADD_FAILURE() << "mapped over the program's code";
    } catch (const pool_error& e) {
        EXPECT_NE(std::string(e.what()).find("checkpoint_volatile_image_test"), std::string::npos) << e.what();
    }
}

TEST(VolatileImage, AnUnalignedBaseOrNoBytesIsAUsageError) {
    const std::uint64_t p = page_bytes();
    EXPECT_THROW(volatile_image::map(64 * p + 8, p), usage_error);
    EXPECT_THROW(volatile_image::map(0, 0), usage_error);
    EXPECT_THROW(volatile_image::map(~std::uintptr_t{0} / p * p, 2 * p), usage_error) << "wraps around";
}

// --- eager ---------------------------------------------------------------------------------

TEST(VolatileImage, AnEagerLoadCopiesEverythingOverSeveralThreads) {
    const std::uint64_t p = page_bytes();
    for (const unsigned threads : {1u, 3u, 0u}) {
        const auto source = source_bytes(2048 * p + 3 * p, threads + 1);  // ranges of unequal size
        auto image = volatile_image::map(0, source.size());
        image.load_eager(source.data(), threads);
        EXPECT_EQ(std::memcmp(image.data(), source.data(), source.size()), 0) << threads << " threads";
    }
    const auto small = source_bytes(2 * p, 9);
    auto image = volatile_image::map(0, small.size());
    image.load_eager(small.data(), 8);  // more threads than pages: one page each
    EXPECT_EQ(std::memcmp(image.data(), small.data(), small.size()), 0);
}

TEST(VolatileImage, ArmingTwiceOrAnEagerLoadWhileArmedIsAUsageError) {
    const std::uint64_t p = page_bytes();
    const auto source = source_bytes(4 * p, 1);
    auto image = volatile_image::map(0, source.size());
    EXPECT_EQ(image.pages_loaded(), 0u);
    image.arm_lazy(source.data());
    EXPECT_THROW(image.arm_lazy(source.data()), usage_error);
    EXPECT_THROW(image.load_eager(source.data(), 1), usage_error);
    EXPECT_THROW(volatile_image().arm_lazy(source.data()), usage_error) << "nothing mapped";
    EXPECT_EQ(image.pages_loaded(), 0u);
}

// --- lazy ----------------------------------------------------------------------------------

TEST(VolatileImage, LazyReadsReturnTheSourceAndLoadOnlyTheTouchedPages) {
    const std::uint64_t p = page_bytes();
    const std::uint64_t pages = 4096;
    const auto source = source_bytes(pages * p, 2);
    auto image = volatile_image::map(0, source.size());
    image.arm_lazy(source.data());
    EXPECT_EQ(image.pages_loaded(), 0u) << "arming loads nothing";
    std::mt19937_64 random(7);
    std::set<std::uint64_t> touched;
    for (int k = 0; k < 300; ++k) {
        const std::uint64_t at = random() % (pages * p - 8) / 8 * 8;  // one word, anywhere
        std::uint64_t word = 0;
        std::memcpy(&word, image.data() + at, 8);
        std::uint64_t expected = 0;
        std::memcpy(&expected, source.data() + at, 8);
        ASSERT_EQ(word, expected) << "at " << at;
        touched.insert(at / p);
        EXPECT_EQ(image.pages_loaded(), touched.size());
    }
    for (const std::uint64_t page : touched) EXPECT_TRUE(page_equal(image, source, page)) << "page " << page;
    EXPECT_EQ(image.pages_loaded(), touched.size()) << "a loaded page does not fault again";
}

// Resident pages of this process (the second field of /proc/self/statm).
std::uint64_t resident_pages() {
    std::ifstream statm("/proc/self/statm");
    std::uint64_t size = 0, resident = 0;
    statm >> size >> resident;
    return resident;
}

// Arming writes nothing per page of the image: the page states are the kernel's zero pages
// until a page loads (a zeroed array was 1 MiB here, and a lazy open's time grew with the
// image). A 4 GiB image over a 4 GiB source, neither of which is ever touched but for the
// one page read.
TEST(VolatileImage, ArmingAHugeImageTakesNoMemoryPerPage) {
    const std::uint64_t bytes = std::uint64_t{4} << 30;
    void* src = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ASSERT_NE(src, MAP_FAILED);
    {
        auto image = volatile_image::map(0, bytes);
        const auto before = resident_pages();
        image.arm_lazy(static_cast<const std::byte*>(src));
        EXPECT_LT((resident_pages() - before) * page_bytes(), std::uint64_t{128} << 10)
            << "arming a " << bytes << "-byte image made memory resident";
        std::uint64_t word = 1;
        std::memcpy(&word, image.data() + bytes / 2, 8);
        EXPECT_EQ(word, 0u);
        EXPECT_EQ(image.pages_loaded(), 1u);
    }
    ::munmap(src, bytes);
}

// Pages of [p, p + bytes) that are resident (mincore): counts the image's own pages only, so
// allocations of a sanitizer's runtime or of the loader's threads do not count.
std::uint64_t resident_in(const std::byte* p, std::uint64_t bytes) {
    std::vector<unsigned char> in_core(bytes / page_bytes());
    if (::mincore(const_cast<std::byte*>(p), bytes, in_core.data()) != 0) return ~std::uint64_t{0};
    std::uint64_t n = 0;
    for (const unsigned char c : in_core) n += c & 1u;
    return n;
}

// An eager load writes only the source's pages that hold data: the fresh image is zero
// elsewhere already (an image is mostly zero beyond what its program allocated), so those
// pages are neither faulted in nor made resident. The image still equals the source.
TEST(VolatileImage, AnEagerLoadWritesOnlyThePagesThatHoldData) {
    const std::uint64_t p = page_bytes(), pages = 16384;  // 64 MiB with 4 KiB pages
    std::vector<std::byte> source(pages * p);
    const std::uint64_t with_data[] = {0, 5, 6, 7, 1000, 8191, 8192, pages - 1};
    for (const std::uint64_t page : with_data)
        for (std::uint64_t i = 0; i < p; i += 512) source[page * p + i] = static_cast<std::byte>(1 + page % 200);
    source[3 * p + p - 1] = std::byte{7};  // a page whose only data is its last byte
    auto image = volatile_image::map(0, source.size());
    image.load_eager(source.data(), 2);
    EXPECT_LE(resident_in(image.data(), source.size()), 9u)
        << "9 pages hold data; the other " << pages - 9 << " must not become resident";
    EXPECT_EQ(std::memcmp(image.data(), source.data(), source.size()), 0);
}

TEST(VolatileImage, WritesToALazilyLoadedImageStick) {
    const std::uint64_t p = page_bytes();
    const auto source = source_bytes(64 * p, 3);
    auto image = volatile_image::map(0, source.size());
    image.arm_lazy(source.data());
    image.data()[5 * p + 10] = std::byte{0x11};  // a write as the first touch loads the page first
    EXPECT_EQ(image.pages_loaded(), 1u);
    EXPECT_EQ(std::memcmp(image.data() + 5 * p, source.data() + 5 * p, 10), 0);
    EXPECT_EQ(std::memcmp(image.data() + 5 * p + 11, source.data() + 5 * p + 11, p - 11), 0);
    const std::byte read = image.data()[9 * p];  // a read first, then a write
    image.data()[9 * p] = ~read;
    for (std::uint64_t page = 20; page < 30; ++page) (void)*static_cast<volatile std::byte*>(image.data() + page * p);
    EXPECT_EQ(image.data()[5 * p + 10], std::byte{0x11});
    EXPECT_EQ(image.data()[9 * p], ~source[9 * p]);
    EXPECT_EQ(image.pages_loaded(), 12u);
    EXPECT_EQ(source[5 * p + 10], source_bytes(64 * p, 3)[5 * p + 10]) << "the source is not written";
}

TEST(VolatileImage, ConcurrentFirstTouchesLoadEachPageOnceAndAllSeeItsBytes) {
    const std::uint64_t p = page_bytes();
    const std::uint64_t pages = 512;
    const auto source = source_bytes(pages * p, 4);
    auto image = volatile_image::map(0, source.size());
    image.arm_lazy(source.data());
    std::atomic<unsigned> ready{0};
    std::atomic<unsigned> wrong{0};
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            std::vector<std::uint64_t> order(pages);
            std::iota(order.begin(), order.end(), 0);
            // Threads 0 and 1 go in the same order (they collide on every page), 2 and 3 shuffled.
            if (t >= 2) std::shuffle(order.begin(), order.end(), std::mt19937_64(t));
            ready.fetch_add(1);
            while (ready.load() < 4) std::this_thread::yield();
            for (const std::uint64_t page : order)
                if (!page_equal(image, source, page)) wrong.fetch_add(1);
        });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(wrong.load(), 0u);
    EXPECT_EQ(image.pages_loaded(), pages) << "each page loaded once";
}

TEST(VolatileImage, AFullyLoadedImageIsOneMappingAgain) {
    const std::uint64_t p = page_bytes();
    const std::uint64_t pages = 1024;
    const auto source = source_bytes(pages * p, 5);
    auto image = volatile_image::map(0, source.size());
    image.arm_lazy(source.data());
    std::vector<std::uint64_t> order(pages);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(5));
    for (std::uint64_t k = 0; k < pages; ++k) {
        (void)*static_cast<volatile std::byte*>(image.data() + order[k] * p);
        if (k == pages / 2)
            std::printf("[   info   ] half loaded in random order: the image is %u mappings\n",
                        mappings_in(image.base(), image.base() + image.size()));
    }
    EXPECT_EQ(image.pages_loaded(), pages);
    EXPECT_EQ(mappings_in(image.base(), image.base() + image.size()), 1u)
        << "installed pages merge (a mapping per page would exhaust vm.max_map_count)";
    EXPECT_EQ(std::memcmp(image.data(), source.data(), source.size()), 0);
}

TEST(VolatileImage, SeveralImagesAreArmedAtOnceAndOneCanGoWhileOthersLoad) {
    const std::uint64_t p = page_bytes();
    std::vector<std::vector<std::byte>> sources;
    std::vector<volatile_image> images;
    for (std::uint64_t k = 0; k < 3; ++k) {
        sources.push_back(source_bytes((8 + k) * p, 10 + k));
        images.push_back(volatile_image::map(0, sources.back().size()));
        images.back().arm_lazy(sources.back().data());  // the next push_backs move it, armed
    }
    for (std::uint64_t page = 0; page < 8; ++page)
        for (std::uint64_t k = 0; k < 3; ++k) EXPECT_TRUE(page_equal(images[k], sources[k], page));
    images.erase(images.begin() + 1);  // disarmed and unmapped; the others are moved
    EXPECT_TRUE(page_equal(images[1], sources[2], 9));
    EXPECT_EQ(images[0].pages_loaded(), 8u);
    EXPECT_EQ(images[1].pages_loaded(), 9u);
}

TEST(VolatileImage, ImagesAreArmedAndDestroyedWhileAnotherThreadLoads) {
    // The handler scans the table while slots are filled and emptied: each destroyed image
    // waits for the handlers that read its slot, and the loading thread sees only its image.
    const std::uint64_t p = page_bytes();
    const std::uint64_t pages = 1024;
    const auto source = source_bytes(pages * p, 12);
    const auto other_source = source_bytes(16 * p, 13);
    auto image = volatile_image::map(0, source.size());
    image.arm_lazy(source.data());
    std::atomic<bool> wrong{false};
    std::thread loader([&] {
        for (std::uint64_t page = 0; page < pages; ++page)
            if (!page_equal(image, source, page)) wrong = true;
    });
    for (int round = 0; round < 50; ++round) {
        auto other = volatile_image::map(0, other_source.size());
        other.arm_lazy(other_source.data());
        if (!page_equal(other, other_source, static_cast<std::uint64_t>(round) % 16)) wrong = true;
    }
    loader.join();
    EXPECT_FALSE(wrong.load());
    EXPECT_EQ(image.pages_loaded(), pages);
}

// A fault outside every armed image reaches the handler that was there before (each death
// test runs in a fresh process, "threadsafe": there the handler is installed by its arm). The
// fault is an access to a PROT_NONE page of the test's own, not a null dereference, which
// UBSan (the asan preset) would stop before it faults.
void* forbidden_page() {
    static void* page = ::mmap(nullptr, page_bytes(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return page;
}

void fault_outside() { *static_cast<volatile int*>(forbidden_page()) = 1; }

#if defined(__SANITIZE_ADDRESS__)
// ASan's own SIGSEGV handler is the previous one: it reports the fault and exits.
#define FERRITE_EXPECT_SEGV(statement) EXPECT_DEATH(statement, "AddressSanitizer: SEGV")
#elif defined(__SANITIZE_THREAD__)
// TSan runs the handlers itself; it reports a fault whose handler is the default, and exits.
#define FERRITE_EXPECT_SEGV(statement) EXPECT_DEATH(statement, "ThreadSanitizer: SEGV")
#else
#define FERRITE_EXPECT_SEGV(statement) EXPECT_EXIT(statement, ::testing::KilledBySignal(SIGSEGV), "")
#endif

TEST(VolatileImageDeathTest, AFaultOutsideTheImageStillCrashesAfterArming) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    const std::uint64_t p = page_bytes();
    const auto source = source_bytes(4 * p, 6);
    ASSERT_NE(forbidden_page(), MAP_FAILED);
    FERRITE_EXPECT_SEGV({
        auto image = volatile_image::map(0, source.size());
        image.arm_lazy(source.data());
        if (!page_equal(image, source, 2)) std::_Exit(3);
        fault_outside();
    });
    FERRITE_EXPECT_SEGV({
        auto image = volatile_image::map(0, source.size());
        image.arm_lazy(source.data());
        ::raise(SIGSEGV);  // sent, not a fault: the default action, as without the handler
    });
}

void previous_handler(int, siginfo_t* info, void*) {
    if (info->si_addr == forbidden_page()) {
        static const char text[] = "the previous handler got the fault\n";
        (void)!::write(STDERR_FILENO, text, sizeof text - 1);
        std::_Exit(42);
    }
    std::_Exit(43);
}

TEST(VolatileImageDeathTest, APreviousHandlerGetsTheFaultsOutsideTheImage) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    const std::uint64_t p = page_bytes();
    const auto source = source_bytes(4 * p, 8);
    ASSERT_NE(forbidden_page(), MAP_FAILED);
    EXPECT_EXIT(
        {
            struct sigaction action {};
            action.sa_sigaction = previous_handler;
            action.sa_flags = SA_SIGINFO;
            sigemptyset(&action.sa_mask);
            ::sigaction(SIGSEGV, &action, nullptr);
            auto image = volatile_image::map(0, source.size());
            image.arm_lazy(source.data());
            if (!page_equal(image, source, 1) || image.pages_loaded() != 1) std::_Exit(3);
            fault_outside();
        },
        ::testing::ExitedWithCode(42), "the previous handler got the fault");
}

// --- for the docs: eager load time against the time to the first completed read --------------

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr std::uint64_t timed_sizes_mib[] = {16};  // every copy is checked: slow
#else
constexpr std::uint64_t timed_sizes_mib[] = {16, 64, 256};
#endif

TEST(VolatileImage, EagerVersusLazyFirstTouch) {
    const std::uint64_t p = page_bytes();
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    for (const std::uint64_t mib : timed_sizes_mib) {
        const auto source = source_bytes(mib << 20, mib);
        const std::uint64_t probe = (mib << 20) / 3 / 8 * 8;  // a word in some page
        std::uint64_t expected = 0;
        std::memcpy(&expected, source.data() + probe, 8);

        auto start = std::chrono::steady_clock::now();
        {
            auto image = volatile_image::map(0, source.size());
            image.load_eager(source.data(), threads);
            std::uint64_t word = 0;
            std::memcpy(&word, image.data() + probe, 8);
            const double eager = ms_since(start);
            EXPECT_EQ(word, expected);

            auto lazy = volatile_image::map(0, source.size());
            start = std::chrono::steady_clock::now();
            lazy.arm_lazy(source.data());
            const double armed = ms_since(start);
            std::memcpy(&word, lazy.data() + probe, 8);
            const double first = ms_since(start);
            EXPECT_EQ(word, expected);
            std::printf("[   info   ] %3llu MiB: eager load (map + copy, %u threads) %.2f ms; lazy: arm %.3f ms, "
                        "arm + first read %.3f ms\n",
                        static_cast<unsigned long long>(mib), threads, eager, armed, first);
            if (mib > 64) continue;  // loading every page lazily takes about 17 us a page
            const std::uint64_t pages = lazy.size() / p;
            start = std::chrono::steady_clock::now();
            for (std::uint64_t page = 0; page < pages; ++page)
                (void)*static_cast<volatile std::byte*>(lazy.data() + page * p);
            const double all = ms_since(start);
            EXPECT_EQ(lazy.pages_loaded(), pages);
            std::printf("[   info   ] %3llu MiB: then every page on first touch, in order: %.1f ms (%.2f us a page)\n",
                        static_cast<unsigned long long>(mib), all, all * 1000.0 / static_cast<double>(pages));
        }
    }
}

}  // namespace
}  // namespace ferrite::checkpoint
