// open_checks.hpp: opening a vector, stack, deque or queue whose operations could not work
// throws usage_error and writes nothing: a pool opened read-only (pool::inspect; its first
// push used to end the process with SIGSEGV) and a heap opened after a restart but not
// recovered (every growing push used to answer "full" as if the heap were exhausted).
#include "ferrite/containers/open_checks.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <unistd.h>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/containers/deque.hpp"
#include "ferrite/containers/queue.hpp"
#include "ferrite/containers/stack.hpp"
#include "ferrite/containers/vector.hpp"

namespace ferrite {
namespace {

using u64 = std::uint64_t;
using heap = alloc::buddy_heap;

template <class S>
bool push(S& s, u64 v) {  // vector and deque push_back; stack and queue push
    if constexpr (requires { s.push_back(v); })
        return s.push_back(v);
    else
        return s.push(v);
}

template <class Structure>
class OpenChecks : public ::testing::Test {
protected:
    static constexpr u64 heap_bytes = 1 << 20;

    void SetUp() override {
        path_ = "/dev/shm/ferrite-open-checks-test-" + std::to_string(::getpid());
        std::filesystem::remove(path_);
        auto p = pmem::pool::create(path_, "open-checks", 2 << 20);
        auto* region = static_cast<std::byte*>(p.root_bytes(64 + heap_bytes)) + 64;
        auto h = heap::create(p, static_cast<u64>(region - p.base()), heap_bytes);
        auto& anchor = *static_cast<u64*>(p.root_bytes(64 + heap_bytes));
        auto s = Structure::create(p, h, anchor, 2);
        push(s, 1);
        anchor_ = anchor;
    }
    void TearDown() override { std::filesystem::remove(path_); }

    std::string file_bytes() const {
        std::ifstream in(path_, std::ios::binary);
        return {std::istreambuf_iterator<char>(in), {}};
    }
    // Opening `p` with `h` throws usage_error naming `needle`, and the file is unchanged.
    void expect_refused(pmem::pool& p, heap& h, const char* needle) {
        const auto before = file_bytes();
        try {
            Structure::open(p, h, anchor_);
            ADD_FAILURE() << "opened; wanted usage_error mentioning '" << needle << "'";
        } catch (const usage_error& e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
        EXPECT_EQ(file_bytes(), before) << "the pool file changed";
    }

    std::string path_;
    u64 anchor_ = 0;
};

using structures = ::testing::Types<vector<u64, heap>, stack<u64, heap>, deque<u64, heap>, queue<u64, heap>>;
TYPED_TEST_SUITE(OpenChecks, structures);

TYPED_TEST(OpenChecks, ReadOnlyPoolIsRefused) {
    auto p = pmem::pool::inspect(this->path_);
    auto h = heap::open(p, p.heap_offset());
    this->expect_refused(p, h, "read-only");
}

TYPED_TEST(OpenChecks, UnrecoveredHeapIsRefusedThenRecoveryOpensIt) {
    auto p = pmem::pool::open(this->path_, "open-checks");
    auto h = heap::open(p, p.heap_offset());
    this->expect_refused(p, h, "not recovered");
    h.recover();
    TypeParam::recover(p, h, this->anchor_);
    h.finish_recovery();
    auto s = TypeParam::open(p, h, this->anchor_);
    for (u64 i = 2; i <= 9; ++i) ASSERT_TRUE(push(s, i)) << "grows past its capacity of 2";
}

}  // namespace
}  // namespace ferrite
