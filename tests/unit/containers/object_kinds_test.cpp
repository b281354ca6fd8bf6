// The kind registry (containers/object_kinds.hpp): ids and names unique, every named_kind
// registered under its name, and a pool holding one object of every kind (the PFC stack,
// queue and deque by name included) that opens, recovers, lists and checks through it.
#include "ferrite/containers/object_kinds.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "catalog_test_support.hpp"
#include "ferrite/containers/catalog.hpp"

namespace ferrite {
namespace {

using heap = alloc::buddy_heap;
using u64 = std::uint64_t;
using ferrite_test::CatalogTest;

TEST(ObjectKinds, IdsAndNamesAreUniqueAndNonzero) {
    std::set<std::uint32_t> ids;
    std::set<std::string_view> names;
    for (const auto* k : containers::registered_kinds()) {
        EXPECT_NE(k->id, 0u) << k->name << ": 0 marks a free directory entry";
        EXPECT_TRUE(ids.insert(k->id).second) << "id " << k->id << " registered twice";
        EXPECT_TRUE(names.insert(k->name).second) << k->name << " registered twice";
        EXPECT_EQ(containers::find_kind(k->id), k);
        EXPECT_EQ(containers::kind_name(k->id), k->name);
    }
    EXPECT_EQ(containers::find_kind(0), nullptr);
    EXPECT_EQ(containers::kind_name(99), "unknown(99)");
}

template <class T>
std::string registered_name() {
    const auto* k = containers::find_kind(containers::named_kind<T>::id);
    return k ? std::string(k->name) : "(not registered)";
}

TEST(ObjectKinds, EveryNameableTypeIsRegisteredUnderItsName) {
    EXPECT_EQ((registered_name<vector<double, heap>>()), "vector");
    EXPECT_EQ((registered_name<vector<double, heap, containers::use_fpfc>>()), "vector");
    EXPECT_EQ((registered_name<stack<u64, heap>>()), "stack");
    EXPECT_EQ((registered_name<queue<u64, heap>>()), "queue");
    EXPECT_EQ((registered_name<deque<u64, heap>>()), "deque");
    EXPECT_EQ((registered_name<dfc_stack<u64>>()), "dfc_stack");
    EXPECT_EQ((registered_name<dfc_queue<u64>>()), "dfc_queue");
    EXPECT_EQ((registered_name<dfc_deque<u64>>()), "dfc_deque");
    EXPECT_EQ((registered_name<dpfc_stack<u64>>()), "dpfc_stack");
    EXPECT_EQ((registered_name<dpfc_queue<u64>>()), "dpfc_queue");
    EXPECT_EQ((registered_name<ferrite::ordered_map<u64, u64>>()), "ordered_map");
    EXPECT_EQ((registered_name<ferrite::ordered_map<ferrite::key16, u64>>()), "ordered_map_k16");
}

// One object of every kind, used, closed, reopened (recovery runs every kind's recover),
// then listed, checked and used again through the same names.
TEST_F(CatalogTest, EveryKindByNameOpensRecoversListsAndChecks) {
    {
        catalog names(*pool_, *heap_);
        names.open_vector<double>("prices")->push_back(9.5);
        auto undo = names.open<stack<u64, heap>>("undo");
        undo->push(1);
        undo->push(2);
        auto jobs = names.open<queue<u64, heap>>("jobs", 8);
        jobs->push(10);
        jobs->push(11);
        auto window = names.open<deque<std::uint32_t, heap>>("window");
        window->push_front(5);
        window->push_back(6);
        names.open_dfc_stack<u64>("dfc-s", 2)->push(0, 20);
        names.open_dfc_queue<u64>("dfc-q", 2)->enqueue(1, 21);
        names.open_dfc_deque<u64>("dfc-d", 2)->push_back(0, 22);
        EXPECT_EQ((names.open<stack<u64, heap>>("undo")), undo) << "one object per name";
    }
    reopen();  // recover_pool: every kind's recover through the registry
    catalog names(*pool_, *heap_);
    std::map<std::string, std::string> kinds;
    for (const auto& o : names.list()) kinds[o.name] = o.kind;
    const std::map<std::string, std::string> expected{
        {"prices", "vector"}, {"undo", "stack"},      {"jobs", "queue"},     {"window", "deque"},
        {"dfc-s", "dfc_stack"}, {"dfc-q", "dfc_queue"}, {"dfc-d", "dfc_deque"}};
    EXPECT_EQ(kinds, expected);
    EXPECT_NO_THROW(names.validate());
    for (const auto& c : names.check_objects()) {
        EXPECT_EQ(c.problem, "") << c.name;
        EXPECT_NE(c.detail, "") << c.name << ": every kind describes itself";
    }
    EXPECT_EQ((names.open<stack<u64, heap>>("undo")->pop()), std::optional<u64>(2));
    EXPECT_EQ((names.open<queue<u64, heap>>("jobs")->pop()), std::optional<u64>(10));
    EXPECT_EQ((names.open<deque<std::uint32_t, heap>>("window")->unsynchronized_contents()),
              (std::vector<std::uint32_t>{5, 6}));
    EXPECT_EQ(names.open_dfc_stack<u64>("dfc-s", 2)->pop(1), std::optional<u64>(20));
    EXPECT_EQ(names.open_dfc_queue<u64>("dfc-q", 2)->dequeue(0), std::optional<u64>(21));
    EXPECT_EQ(names.open_dfc_deque<u64>("dfc-d", 2)->pop_front(1), std::optional<u64>(22));
}

// A stack is stored as a vector and a queue as a deque, but a name keeps its interface.
TEST_F(CatalogTest, AStackIsNotAVectorAndAQueueIsNotADeque) {
    catalog names(*pool_, *heap_);
    names.open<stack<u64, heap>>("s")->push(1);
    names.open<queue<u64, heap>>("q")->push(1);
    try {
        names.open_vector<u64>("s");
        ADD_FAILURE() << "a stack opened as a vector";
    } catch (const pool_error& e) {
        EXPECT_EQ(e.kind(), pool_errc::type_mismatch);
        EXPECT_NE(std::string(e.what()).find("holds a stack of u64"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("asked for a vector"), std::string::npos) << e.what();
    }
    EXPECT_THROW((names.open<deque<u64, heap>>("q")), pool_error);
    EXPECT_EQ(names.list().size(), 2u) << "a refused open adds nothing";
}

TEST_F(CatalogTest, AFailedMakeLeavesNoEntry) {
    catalog names(*pool_, *heap_);
    EXPECT_THROW(names.open_dfc_queue<u64>("q", 0), usage_error) << "no thread id";
    EXPECT_THROW(names.open_dfc_queue<u64>("q", 2, 0), usage_error) << "no node";
    EXPECT_TRUE(names.list().empty());
}

}  // namespace
}  // namespace ferrite
