// Helpers shared by the pmem unit tests: a fresh pool directory under /dev/shm per test,
// whole-file reads and header patches (to craft damaged pool files), and a fixture that
// restores the persistence backend and emulated latency a test changed.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "ferrite/pmem/backend.hpp"
#include "ferrite/pmem/counters.hpp"
#include "ferrite/pmem/pool_header.hpp"

namespace ferrite::pmem {
// Readable counters in assertion failures (found by gtest through ADL).
inline void PrintTo(const counters& c, std::ostream* os) {
    *os << "{pwb_lines=" << c.pwb_lines << ", pfences=" << c.pfences << ", psyncs=" << c.psyncs
        << ", nt_stores=" << c.nt_stores << "}";
}
}  // namespace ferrite::pmem

namespace ferrite_test {

namespace fs = std::filesystem;

// A test whose pool files live in a unique directory under /dev/shm (mkdtemp), removed with
// everything in it in TearDown.
class pool_dir_test : public ::testing::Test {
protected:
    void SetUp() override {
        std::string tmpl = "/dev/shm/ferrite-unit-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl.data()), nullptr) << "mkdtemp: " << std::strerror(errno);
        dir_ = tmpl;
    }
    void TearDown() override {
        std::error_code ec;
        if (!dir_.empty()) fs::remove_all(dir_, ec);
    }
    const fs::path& dir() const { return dir_; }
    fs::path file(const std::string& name) const { return dir_ / name; }

private:
    fs::path dir_;
};

// The whole file, or nullopt if there is no regular file at p.
inline std::optional<std::vector<char>> read_file(const fs::path& p) {
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) return std::nullopt;
    std::ifstream in(p, std::ios::binary);
    if (!in) return std::nullopt;
    return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_file(const fs::path& p, const std::vector<char>& bytes) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    ASSERT_TRUE(out.good()) << "cannot write " << p;
}

// Overwrite n bytes at offset of the file (the rest of the file is kept).
inline void patch_file(const fs::path& p, off_t offset, const void* bytes, std::size_t n) {
    int fd = ::open(p.c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0) << "open " << p << ": " << std::strerror(errno);
    auto written = ::pwrite(fd, bytes, n, offset);
    ::close(fd);
    ASSERT_EQ(written, static_cast<ssize_t>(n)) << "pwrite " << p;
}

inline ferrite::pmem::pool_header read_header(const fs::path& p) {
    ferrite::pmem::pool_header h{};
    int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_GE(fd, 0) << "open " << p << ": " << std::strerror(errno);
    if (fd < 0) return h;
    auto got = ::pread(fd, &h, sizeof h, 0);
    ::close(fd);
    EXPECT_EQ(got, static_cast<ssize_t>(sizeof h)) << "pread " << p;
    return h;
}

// Write the header back as given (the checksum is written as it is in h).
inline void write_header(const fs::path& p, const ferrite::pmem::pool_header& h) {
    patch_file(p, 0, &h, sizeof h);
}

// Write the header back with a freshly computed identity checksum.
inline void write_header_with_checksum(const fs::path& p, ferrite::pmem::pool_header h) {
    h.identity.checksum = ferrite::pmem::identity_checksum(h.identity);
    write_header(p, h);
}

// Restores, after each test, the backend and emulated latency that were in use before it.
class backend_test : public ::testing::Test {
protected:
    void SetUp() override {
        saved_backend_ = ferrite::pmem::current_backend();
        saved_latency_ = ferrite::pmem::current_emulated_latency();
        ferrite::pmem::reset_thread_counters();
    }
    void TearDown() override {
        ferrite::pmem::set_backend(saved_backend_);
        ferrite::pmem::set_emulated_latency(saved_latency_);
    }
    ferrite::pmem::backend saved_backend() const { return saved_backend_; }

private:
    ferrite::pmem::backend saved_backend_{};
    ferrite::pmem::emulated_latency saved_latency_{};
};

}  // namespace ferrite_test
