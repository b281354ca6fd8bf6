// site_registry: stable ids from source locations, per-site counts, switching sites off.
#include "ferrite/sim/site_registry.hpp"

#include <gtest/gtest.h>

namespace ferrite::sim {
namespace {

pmem::site here(pmem::site s = pmem::site::current()) { return s; }

TEST(SiteRegistry, IdIsPathFromSourceRootLineAndColumn) {
    const auto s = here();
    const auto id = site_registry::id_of(s);
    EXPECT_EQ(id.rfind("tests/unit/sim/site_registry_test.cpp:", 0), 0u) << id;
    std::string line_part = ":";
    line_part += std::to_string(s.line());
    line_part += ':';
    EXPECT_NE(id.find(line_part), std::string::npos) << id;
}

TEST(SiteRegistry, InternsOncePerLocationAndKind) {
    site_registry r;
    const auto s = here();
    const auto a = r.intern(s, site_kind::pwb);
    EXPECT_EQ(r.intern(s, site_kind::pwb), a);
    EXPECT_NE(r.intern(s, site_kind::pfence), a);
    EXPECT_NE(r.intern(here(), site_kind::pwb), a);
    EXPECT_EQ(r.report().size(), 3u);
}

TEST(SiteRegistry, CountsCallsDoubleFlushesAndEmptyFences) {
    site_registry r;
    const auto id = r.intern(here(), site_kind::pwb);
    r.count_call(id);
    r.count_call(id);
    r.count_redundant_flush(id);
    r.count_empty_fence(id);
    const auto rep = r.report();
    ASSERT_EQ(rep.size(), 1u);
    EXPECT_EQ(rep[0].calls, 2u);
    EXPECT_EQ(rep[0].redundant_flushes, 1u);
    EXPECT_EQ(rep[0].empty_fences, 1u);
    EXPECT_EQ(rep[0].kind, site_kind::pwb);
}

TEST(SiteRegistry, DisableBeforeAndAfterTheSiteIsKnown) {
    site_registry r;
    const auto s1 = here();
    const auto s2 = here();
    r.disable(site_registry::id_of(s1));  // not yet seen
    const auto a = r.intern(s1, site_kind::pwb);
    const auto b = r.intern(s2, site_kind::pwb);
    EXPECT_TRUE(r.disabled(a));
    EXPECT_FALSE(r.disabled(b));
    r.disable(site_registry::id_of(s2));  // already seen
    EXPECT_TRUE(r.disabled(b));
}

}  // namespace
}  // namespace ferrite::sim
