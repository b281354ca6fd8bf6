// The conformance suite: what every structure a catalog can name must do, run over each of
// them (a typed test). A new structure joins with one line in `structures` below; the
// `sample` adapter reaches it through the interface of its concept (containers/concepts.hpp),
// and a structure of a new shape adds one branch there.
//
// For each structure S, named in a catalog:
//   * created on first open, the same object on the second, listed under its kind's name;
//   * its elements survive a clean reopen and a kill (the file as a crash leaves it, with
//     the mapping shared: every store reached the file) followed by recover_pool;
//   * check_objects finds it valid and describes it;
//   * opening its name as another kind is pool_error(type_mismatch), nothing added;
//   * a damaged header (its magic word) is damaged_pool naming the object, and the file is
//     left byte-identical;
//   * a handle kept past the pool's close refuses with usage_error.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "catalog_test_support.hpp"
#include "ferrite/containers/catalog.hpp"
#include "ferrite/containers/concepts.hpp"
#include "ferrite/containers/sets_kind.hpp"

namespace ferrite {
namespace {

using heap = alloc::buddy_heap;
using u64 = std::uint64_t;

// How the suite opens a structure, adds an element and counts them.
template <class S>
struct sample {
    static std::shared_ptr<S> open(catalog& c, const std::string& name) {
        if constexpr (containers::detectable_structure<S>) return c.open<S>(name, 2u);
        else return c.open<S>(name);
    }
    static void put(S& s, u64 v) {
        bool ok = false;
        if constexpr (requires { s.push_back(v); }) ok = s.push_back(v);
        else if constexpr (requires { s.push(v); }) ok = s.push(v);
        else if constexpr (requires { s.push(0u, v); }) ok = s.push(0u, v);
        else if constexpr (requires { s.enqueue(0u, v); }) ok = s.enqueue(0u, v);
        else if constexpr (requires { s.push_back(0u, v); }) ok = s.push_back(0u, v);
        else if constexpr (requires { s.insert(v, v); }) ok = s.insert(v, v);  // a map
        else if constexpr (requires { s.insert(v); }) ok = s.insert(v);        // a set
        else static_assert(sizeof(S) == 0, "teach sample<S>::put this structure's insertion");
        ASSERT_TRUE(ok);
    }
    static u64 count(S& s) {
        if constexpr (containers::sequence_structure<S>) {
            return s.size();
        } else if constexpr (requires { s.contains(u64{}); }) {  // a set or map: count what a scan visits
            u64 n = 0;
            s.for_each([&](const auto&...) { ++n; });
            return n;
        } else {
            return s.unsynchronized_contents().size();
        }
    }
    // Another kind to open the same name as: a vector, or a stack for a vector.
    using other_kind = std::conditional_t<std::is_same_v<S, vector<u64, heap>>, stack<u64, heap>, vector<u64, heap>>;
};

template <class S>
class Conformance : public ferrite_test::CatalogTest {
protected:
    using adapter = sample<S>;
    static constexpr const char* name = "subject";

    std::string file() const {
        std::ifstream in(path_, std::ios::binary);
        return {std::istreambuf_iterator<char>(in), {}};
    }
    std::string kind() const { return containers::kind_name(containers::named_kind<S>::id); }
    // The pool offset of the subject's header, read through a read-only pool.
    u64 anchor() {
        heap_.reset();
        pool_.reset();
        auto ro = pmem::pool::inspect(path_);
        auto h = alloc::buddy_heap::open(ro, ro.heap_offset());
        auto dir = alloc::name_directory::open_or_create(ro, h);
        const auto* e = dir.find(name);
        return e ? e->anchor : 0;
    }
};

using structures = ::testing::Types<vector<u64, heap>, stack<u64, heap>, queue<u64, heap>, deque<u64, heap>,
                                    dfc_stack<u64>, dfc_queue<u64>, dfc_deque<u64>, durable_set<u64>,
                                    durable_set<u64, use_link_free>, durable_map<u64, u64>,
                                    durable_map<u64, u64, use_link_free>>;
TYPED_TEST_SUITE(Conformance, structures);

TYPED_TEST(Conformance, CreatedOnceListedByKindAndValid) {
    using A = typename TestFixture::adapter;
    catalog names(*this->pool_, *this->heap_);
    auto s = A::open(names, this->name);
    EXPECT_EQ(A::open(names, this->name), s) << "one object per name";
    A::put(*s, 7);
    ASSERT_EQ(names.list().size(), 1u);
    EXPECT_EQ(names.list()[0].kind, this->kind());
    const auto checks = names.check_objects();
    ASSERT_EQ(checks.size(), 1u);
    EXPECT_EQ(checks[0].problem, "");
    EXPECT_NE(checks[0].detail, "");
}

TYPED_TEST(Conformance, SurvivesACleanReopenAndAKill) {
    using A = typename TestFixture::adapter;
    const std::string killed = this->path_ + ".killed";
    {
        catalog names(*this->pool_, *this->heap_);
        auto s = A::open(names, this->name);
        for (u64 i = 0; i < 100; ++i) A::put(*s, i);
        std::filesystem::copy_file(this->path_, killed, std::filesystem::copy_options::overwrite_existing);
    }
    this->reopen();
    {
        catalog names(*this->pool_, *this->heap_);
        EXPECT_EQ(A::count(*A::open(names, this->name)), 100u);
    }
    // The killed copy: not shut down cleanly, so recover_pool runs the kind's recovery.
    this->heap_.reset();
    this->pool_.reset();
    std::filesystem::rename(killed, this->path_);
    this->reopen();
    catalog names(*this->pool_, *this->heap_);
    EXPECT_EQ(A::count(*A::open(names, this->name)), 100u);
    EXPECT_NO_THROW(names.validate());
}

TYPED_TEST(Conformance, AnotherKindIsATypeMismatch) {
    using A = typename TestFixture::adapter;
    catalog names(*this->pool_, *this->heap_);
    A::put(*A::open(names, this->name), 1);
    try {
        (void)names.open<typename A::other_kind>(this->name);
        ADD_FAILURE() << "opened a " << this->kind() << " as another kind";
    } catch (const pool_error& e) {
        EXPECT_EQ(e.kind(), pool_errc::type_mismatch) << e.what();
        EXPECT_NE(std::string(e.what()).find("holds a " + this->kind()), std::string::npos) << e.what();
    }
    EXPECT_EQ(names.list().size(), 1u);
}

TYPED_TEST(Conformance, ADamagedHeaderIsRefusedByNameWritingNothing) {
    using A = typename TestFixture::adapter;
    {
        catalog names(*this->pool_, *this->heap_);
        A::put(*A::open(names, this->name), 1);
    }
    const u64 at = this->anchor();
    ASSERT_NE(at, 0u);
    {
        std::fstream f(this->path_, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(static_cast<std::streamoff>(at));
        f.put('\x5a');  // the magic word every header starts with
    }
    const auto before = this->file();
    try {
        this->reopen();
        catalog names(*this->pool_, *this->heap_);
        (void)A::open(names, this->name);
        ADD_FAILURE() << "a " << this->kind() << " with a damaged magic word opened";
    } catch (const damaged_pool& e) {
        EXPECT_EQ(e.object(), this->name) << e.what();
    }
    this->heap_.reset();
    this->pool_.reset();
    EXPECT_EQ(this->file(), before) << "a refused open or recovery writes nothing";
}

TYPED_TEST(Conformance, AHandleKeptPastCloseRefuses) {
    using A = typename TestFixture::adapter;
    std::shared_ptr<TypeParam> s;
    {
        catalog names(*this->pool_, *this->heap_);
        s = A::open(names, this->name);
        A::put(*s, 1);
    }
    this->pool_->close();
    EXPECT_THROW(A::put(*s, 2), usage_error);
}

// The set and map contracts, which no ferrite structure meets yet, accept a model of them
// and refuse a sequence: they can fail.
struct model_set {
    using key_type = u64;
    bool insert(const u64&) { return true; }
    bool erase(const u64&) { return true; }
    bool contains(const u64&) { return false; }
};
struct model_ordered_map {
    using key_type = u64;
    using mapped_type = double;
    bool insert(const u64&, const double&) { return true; }
    void put(const u64&, const double&) {}
    std::optional<double> get(const u64&) { return std::nullopt; }
    bool erase(const u64&) { return true; }
    std::size_t scan(const u64&, std::size_t, std::vector<std::pair<u64, double>>&) { return 0; }
};
static_assert(containers::durable_set<model_set>);
static_assert(containers::ordered_map<model_ordered_map> && containers::durable_map<model_ordered_map>);
static_assert(!containers::durable_set<vector<u64, heap>>);
static_assert(!containers::detectable_structure<vector<u64, heap>>);
static_assert(!containers::sequence_structure<dfc_queue<u64>>);
static_assert(!containers::persistent_structure<model_set>, "not nameable: no registered kind");

}  // namespace
}  // namespace ferrite
