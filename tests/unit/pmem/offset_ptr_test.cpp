// Self-relative pointers (offset_ptr.hpp): null, pointing at a target before or after it or
// at itself, copies re-based to the copy's address, an image memcpy'd into another buffer
// pointing into the new buffer, and comparisons.
#include "ferrite/pmem/offset_ptr.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>

namespace pm = ferrite::pmem;

namespace {

static_assert(sizeof(pm::offset_ptr<int>) == 8);
static_assert(std::is_standard_layout_v<pm::offset_ptr<int>>);
static_assert(std::is_trivially_destructible_v<pm::offset_ptr<int>>);

TEST(OffsetPtrTest, DefaultAndNullptrAreNull) {
    pm::offset_ptr<int> a;
    pm::offset_ptr<int> b(nullptr);
    pm::offset_ptr<int> c(static_cast<int*>(nullptr));
    for (const auto* p : {&a, &b, &c}) {
        EXPECT_FALSE(*p);
        EXPECT_EQ(p->get(), nullptr);
        EXPECT_TRUE(*p == nullptr);
        EXPECT_TRUE(nullptr == *p);
        EXPECT_FALSE(*p != nullptr);
        EXPECT_EQ(p->raw(), 0) << "the stored value 0 means null";
    }
    EXPECT_TRUE(a == b);
    EXPECT_TRUE(b == c);

    int x = 5;
    pm::offset_ptr<int> d(&x);
    ASSERT_TRUE(d);
    d = nullptr;
    EXPECT_FALSE(d);
    EXPECT_EQ(d.raw(), 0);
    d = &x;
    d = static_cast<int*>(nullptr);
    EXPECT_FALSE(d);
}

TEST(OffsetPtrTest, PointsAtTargetsOnEitherSide) {
    struct layout {
        int before;
        pm::offset_ptr<int> p;
        int after;
    } s{1, nullptr, 2};
    s.p = &s.after;
    EXPECT_EQ(s.p.get(), &s.after);
    EXPECT_EQ(*s.p, 2);
    EXPECT_GT(s.p.raw(), 0);
    *s.p = 20;
    EXPECT_EQ(s.after, 20);

    s.p = &s.before;
    EXPECT_EQ(s.p.get(), &s.before);
    EXPECT_LT(s.p.raw(), 0);
    EXPECT_EQ(s.p.raw(), reinterpret_cast<std::intptr_t>(&s.before) -
                             reinterpret_cast<std::intptr_t>(&s.p) - 1);
}

TEST(OffsetPtrTest, ArrowAndConstTargets) {
    struct item {
        int key;
        double value;
    } it{7, 1.5};
    pm::offset_ptr<item> p(&it);
    EXPECT_EQ(p->key, 7);
    p->value = 2.5;
    EXPECT_EQ(it.value, 2.5);

    const int c = 9;
    pm::offset_ptr<const int> q(&c);
    EXPECT_EQ(*q, 9);
    EXPECT_EQ(q.get(), &c);
}

TEST(OffsetPtrTest, SelfPointing) {
    struct node {
        pm::offset_ptr<node> next;
        int value;
    } n{nullptr, 3};
    n.next = &n;  // the head of an empty circular list
    EXPECT_TRUE(n.next);
    EXPECT_EQ(n.next.raw(), -1);
    EXPECT_EQ(n.next.get(), &n);
    EXPECT_EQ(n.next->next->next->value, 3);
}

TEST(OffsetPtrTest, CopiesAreRebasedToTheirOwnAddress) {
    int x = 1;
    pm::offset_ptr<int> a(&x);
    pm::offset_ptr<int> b(a);  // copy construction
    pm::offset_ptr<int> c;
    c = a;                     // copy assignment
    EXPECT_EQ(b.get(), &x);
    EXPECT_EQ(c.get(), &x);
    EXPECT_NE(a.raw(), b.raw()) << "same target from another address: another offset";
    EXPECT_NE(b.raw(), c.raw());

    pm::offset_ptr<int> null_src;
    pm::offset_ptr<int> d(null_src);
    EXPECT_FALSE(d);
    c = null_src;
    EXPECT_FALSE(c);

    pm::offset_ptr<int>& alias = a;
    a = alias;  // self-assignment keeps the target
    EXPECT_EQ(a.get(), &x);
}

// A little "pool image": a struct holding data, a pointer into itself and a self-pointer.
struct image {
    std::array<std::uint64_t, 16> values;
    pm::offset_ptr<std::uint64_t> chosen;     // -> values[11]
    pm::offset_ptr<image> self;               // -> the image itself
    pm::offset_ptr<std::uint64_t> nothing;    // null
};
static_assert(std::is_standard_layout_v<image> && std::is_trivially_destructible_v<image>);

TEST(OffsetPtrTest, ImageCopiedIntoAnotherBufferPointsIntoTheNewBuffer) {
    alignas(64) static std::byte first[4096];
    alignas(64) static std::byte second[8192];
    constexpr std::size_t at_first = 640, at_second = 4160;  // different offsets too

    auto* a = ::new (static_cast<void*>(first + at_first)) image{};
    for (std::size_t i = 0; i < a->values.size(); ++i) a->values[i] = 100 + i;
    a->chosen = &a->values[11];
    a->self = a;
    ASSERT_EQ(a->chosen.get(), &a->values[11]);

    // Copy the bytes, as the crash simulator copies a media image or a pool is remapped.
    std::memcpy(second + at_second, first + at_first, sizeof(image));
    auto* b = std::launder(reinterpret_cast<image*>(second + at_second));

    EXPECT_EQ(b->chosen.get(), &b->values[11]);
    EXPECT_EQ(*b->chosen, 111u);
    EXPECT_EQ(b->self.get(), b);
    EXPECT_FALSE(b->nothing);
    EXPECT_EQ(b->chosen.raw(), a->chosen.raw());

    // The copy is independent of the original.
    *b->chosen = 5;
    EXPECT_EQ(a->values[11], 111u);
    EXPECT_EQ(b->values[11], 5u);
}

TEST(OffsetPtrTest, Comparisons) {
    int x = 1, y = 2;
    pm::offset_ptr<int> px1(&x);
    pm::offset_ptr<int> px2(&x);  // same target, different address and offset
    pm::offset_ptr<int> py(&y);
    pm::offset_ptr<int> null1, null2;

    EXPECT_NE(px1.raw(), px2.raw());
    EXPECT_TRUE(px1 == px2);
    EXPECT_FALSE(px1 != px2);
    EXPECT_FALSE(px1 == py);
    EXPECT_TRUE(px1 != py);
    EXPECT_TRUE(null1 == null2);
    EXPECT_FALSE(null1 == px1);
    EXPECT_TRUE(px1 != null1);
    EXPECT_TRUE(null1 == nullptr);
    EXPECT_TRUE(nullptr == null1);
    EXPECT_TRUE(px1 != nullptr);
    EXPECT_TRUE(nullptr != px1);
    EXPECT_TRUE(px1 == pm::offset_ptr<int>(&x));
}

}  // namespace

TEST(OffsetPtrTest, ZeroFilledMemoryHoldsNull) {
    // A fresh pool root is zero-filled: the pointers in it must read as null.
    alignas(pm::offset_ptr<int>) unsigned char bytes[sizeof(pm::offset_ptr<int>)] = {};
    const auto* p = reinterpret_cast<const pm::offset_ptr<int>*>(bytes);
    EXPECT_FALSE(*p);
    EXPECT_EQ(p->get(), nullptr);
}
