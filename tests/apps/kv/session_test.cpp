// The memcached text and meta protocol as ferrite-kv's session speaks it, without sockets.
#include "expiry.hpp"
#include "session_harness.hpp"

#include <gtest/gtest.h>

namespace ferrite::kv {
namespace {

using testing::session_harness;

TEST(Session, SetThenGetReturnsValueAndFlags) {
  session_harness h;
  EXPECT_EQ(h.feed("set k 42 0 5\r\nhello\r\n"), "STORED\r\n");
  EXPECT_EQ(h.feed("get k\r\n"), "VALUE k 42 5\r\nhello\r\nEND\r\n");
  EXPECT_EQ(h.feed("get missing k\r\n"), "VALUE k 42 5\r\nhello\r\nEND\r\n");
}

TEST(Session, RequestsSplitAtEveryByteGiveTheSameReplies) {
  const std::string script =
      "set a 1 0 3\r\nabc\r\nget a\r\nappend a 0 0 2\r\nde\r\nincr n 1\r\nset n 0 0 1\r\n9\r\n"
      "incr n 1\r\nms m 2 F3 T0\r\nhi\r\nmg m v f\r\ndelete a\r\nget a\r\nmn\r\n";
  session_harness whole;
  const std::string expected = whole.feed(script);
  session_harness bytewise;
  std::string got;
  for (const char c : script) got += bytewise.feed(std::string_view(&c, 1));
  EXPECT_EQ(got, expected);
  EXPECT_TRUE(bytewise.pending.empty());
  EXPECT_NE(expected.find("VALUE a 1 3\r\nabc\r\nEND\r\n"), std::string::npos);
  EXPECT_NE(expected.find("10\r\n"), std::string::npos);
}

TEST(Session, StorageModesFollowMemcached) {
  session_harness h;
  EXPECT_EQ(h.feed("add k 0 0 1\r\na\r\n"), "STORED\r\n");
  EXPECT_EQ(h.feed("add k 0 0 1\r\nb\r\n"), "NOT_STORED\r\n");
  EXPECT_EQ(h.feed("replace nothere 0 0 1\r\nb\r\n"), "NOT_STORED\r\n");
  EXPECT_EQ(h.feed("replace k 7 0 1\r\nb\r\n"), "STORED\r\n");
  EXPECT_EQ(h.feed("prepend k 0 0 1\r\n<\r\n"), "STORED\r\n");
  EXPECT_EQ(h.feed("append k 0 0 1\r\n>\r\n"), "STORED\r\n");
  EXPECT_EQ(h.feed("append nothere 0 0 1\r\n>\r\n"), "NOT_STORED\r\n");
  EXPECT_EQ(h.feed("get k\r\n"), "VALUE k 7 3\r\n<b>\r\nEND\r\n");  // append keeps the flags
}

TEST(Session, CasComparesTheUniqueId) {
  session_harness h;
  EXPECT_EQ(h.feed("cas k 0 0 1 1\r\na\r\n"), "NOT_FOUND\r\n");
  h.feed("set k 0 0 1\r\na\r\n");
  const std::string gets = h.feed("gets k\r\n");
  const std::string prefix = "VALUE k 0 1 ";
  ASSERT_EQ(gets.substr(0, prefix.size()), prefix);
  const std::string cas = gets.substr(prefix.size(), gets.find('\r') - prefix.size());
  EXPECT_EQ(h.feed("cas k 0 0 1 " + cas + "0\r\nb\r\n"), "EXISTS\r\n");
  EXPECT_EQ(h.feed("cas k 0 0 1 " + cas + "\r\nb\r\n"), "STORED\r\n");
  EXPECT_EQ(h.feed("cas k 0 0 1 " + cas + "\r\nc\r\n"), "EXISTS\r\n");  // the store changed it
}

TEST(Session, IncrDecrWrapAndFloorLikeMemcached) {
  session_harness h;
  h.feed("set n 0 0 20\r\n18446744073709551615\r\n");
  EXPECT_EQ(h.feed("incr n 2\r\n"), "1\r\n");
  EXPECT_EQ(h.feed("decr n 5\r\n"), "0\r\n");
  EXPECT_EQ(h.feed("incr missing 1\r\n"), "NOT_FOUND\r\n");
  EXPECT_EQ(h.feed("incr n -1\r\n"), "CLIENT_ERROR invalid numeric delta argument\r\n");
  h.feed("set s 0 0 3\r\nabc\r\n");
  EXPECT_EQ(h.feed("incr s 1\r\n"), "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n");
}

TEST(Session, ExpiryTouchAndGat) {
  session_harness h;
  EXPECT_EQ(h.feed("set gone 0 -1 1\r\nx\r\n"), "STORED\r\n");
  EXPECT_EQ(h.feed("get gone\r\n"), "END\r\n");  // a negative expiry has already passed
  h.feed("set k 0 0 1\r\nx\r\n");
  EXPECT_EQ(h.feed("touch k 100\r\n"), "TOUCHED\r\n");
  EXPECT_EQ(h.feed("touch nothere 100\r\n"), "NOT_FOUND\r\n");
  EXPECT_EQ(h.feed("mg k t\r\n"), "HD t100\r\n");
  EXPECT_EQ(h.feed("gat -1 k\r\n"), "VALUE k 0 1\r\nx\r\nEND\r\n");  // read, then expired
  EXPECT_EQ(h.feed("get k\r\n"), "END\r\n");
}

TEST(Session, FlushAllInvalidatesWhatWasStoredBefore) {
  session_harness h;
  h.feed("set a 0 0 1\r\nx\r\n");
  EXPECT_EQ(h.feed("flush_all\r\n"), "OK\r\n");
  EXPECT_EQ(h.feed("get a\r\n"), "END\r\n");
  EXPECT_EQ(h.feed("set b 0 0 1\r\ny\r\n"), "STORED\r\n");
  EXPECT_EQ(h.feed("get b\r\n"), "VALUE b 0 1\r\ny\r\nEND\r\n");  // same second, after the flush
  EXPECT_EQ(h.feed("flush_all 100 noreply\r\n"), "");
  EXPECT_EQ(h.feed("get b\r\n"), "VALUE b 0 1\r\ny\r\nEND\r\n");  // not yet
  const std::int64_t now = unix_now();
  h.store.flush(now + 10, now);  // the engine's view: a flush 10 s ahead, then 11 s later
  const auto ignore = [](const item_view&) {};
  EXPECT_TRUE(h.store.get("b", now + 9, std::nullopt, ignore));
  EXPECT_FALSE(h.store.get("b", now + 11, std::nullopt, ignore));
}

TEST(Session, NoreplySilencesReplies) {
  session_harness h;
  EXPECT_EQ(h.feed("set k 0 0 1 noreply\r\nx\r\nadd k 0 0 1 noreply\r\ny\r\ndelete k noreply\r\n"
                   "incr k 1 noreply\r\ntouch k 1 noreply\r\nverbosity 1 noreply\r\nget k\r\n"),
            "END\r\n");
}

TEST(Session, DeleteAcceptsOnlyAZeroHoldTime) {
  session_harness h;
  h.feed("set k 0 0 1\r\nx\r\n");
  EXPECT_EQ(h.feed("delete k 10\r\n"), "CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]\r\n");
  EXPECT_EQ(h.feed("delete k 0\r\n"), "DELETED\r\n");
  EXPECT_EQ(h.feed("delete k\r\n"), "NOT_FOUND\r\n");
}

TEST(Session, MalformedRequestsGetMemcachedErrors) {
  session_harness h;
  EXPECT_EQ(h.feed("\r\n"), "ERROR\r\n");
  EXPECT_EQ(h.feed("bogus\r\n"), "ERROR\r\n");
  EXPECT_EQ(h.feed("get\r\n"), "ERROR\r\n");
  EXPECT_EQ(h.feed("set k 0 0\r\n"), "ERROR\r\n");
  EXPECT_EQ(h.feed("set k x 0 1\r\n"), "CLIENT_ERROR bad command line format\r\n");
  EXPECT_EQ(h.feed("set k 0 0 -1\r\n"), "CLIENT_ERROR bad command line format\r\n");
  EXPECT_EQ(h.feed("set k 0 0 99999999999999999999\r\n"), "CLIENT_ERROR bad command line format\r\n");
  EXPECT_EQ(h.feed("set k 4294967296 0 1\r\n"), "CLIENT_ERROR bad command line format\r\n");
  EXPECT_EQ(h.feed("get " + std::string(251, 'k') + "\r\n"), "CLIENT_ERROR bad command line format\r\n");
  EXPECT_EQ(h.feed("set k 0 0 2\r\nabcd\r\n"), "CLIENT_ERROR bad data chunk\r\nERROR\r\n");
  EXPECT_EQ(h.feed("touch k x\r\n"), "CLIENT_ERROR invalid exptime argument\r\n");
  EXPECT_FALSE(h.closed);
  EXPECT_EQ(h.feed("get k\r\n"), "END\r\n");  // nothing was stored by any of them
}

TEST(Session, OversizedValueIsRefusedAndSkippedAsItArrives) {
  session_harness h({.memory_bytes = 64 << 20, .max_item_bytes = 1024, .evict = true});
  EXPECT_EQ(h.feed("set big 0 0 5000\r\n"), "SERVER_ERROR object too large for cache\r\n");
  EXPECT_EQ(h.feed(std::string(3000, 'x')), "");
  EXPECT_TRUE(h.pending.empty());  // skipped, not buffered
  EXPECT_EQ(h.feed(std::string(2000, 'x') + "\r\nget big\r\n"), "END\r\n");
}

TEST(Session, EndlessLineClosesTheConnection) {
  session_harness h;
  EXPECT_EQ(h.feed(std::string(session::max_line + 1, 'a')), "CLIENT_ERROR line too long\r\n");
  EXPECT_TRUE(h.closed);
}

TEST(Session, QuitCloses) {
  session_harness h;
  EXPECT_EQ(h.feed("quit\r\nget k\r\n"), "");
  EXPECT_TRUE(h.closed);
}

TEST(Session, MetaGetSetDeleteArithmetic) {
  session_harness h;
  EXPECT_EQ(h.feed("mg k v\r\n"), "EN\r\n");
  EXPECT_EQ(h.feed("mg k v q\r\nmn\r\n"), "MN\r\n");
  EXPECT_EQ(h.feed("ms k 3 F9 T0 O77 k\r\nabc\r\n"), "HD O77 kk\r\n");
  EXPECT_EQ(h.feed("mg k s f v\r\n"), "VA 3 s3 f9\r\nabc\r\n");
  EXPECT_EQ(h.feed("ms k 1 ME\r\nz\r\n"), "NS\r\n");
  EXPECT_EQ(h.feed("ms k 1 MA\r\nz\r\n"), "HD\r\n");
  EXPECT_EQ(h.feed("mg k v\r\n"), "VA 4\r\nabcz\r\n");
  EXPECT_EQ(h.feed("md k C1\r\n"), "EX\r\n");
  EXPECT_EQ(h.feed("md k q\r\nmd k\r\n"), "NF\r\n");
  EXPECT_EQ(h.feed("ma c\r\n"), "NF\r\n");
  EXPECT_EQ(h.feed("ma c N0 J10 v\r\n"), "VA 2\r\n10\r\n");
  EXPECT_EQ(h.feed("ma c D5 MD v\r\n"), "VA 1\r\n5\r\n");
  EXPECT_EQ(h.feed("mg k x\r\n"), "CLIENT_ERROR invalid flag\r\n");
  EXPECT_EQ(h.feed("ms k\r\n"), "CLIENT_ERROR bad command line format\r\n");
}

TEST(Session, EvictionMakesRoomAndNoEvictRefuses) {
  const engine_limits small{.memory_bytes = 64 * 1024, .max_item_bytes = 4096, .evict = true};
  session_harness evicting(small);
  const std::string value(1000, 'v');
  for (int i = 0; i < 200; ++i) {
    ASSERT_EQ(evicting.feed("set k" + std::to_string(i) + " 0 0 1000\r\n" + value + "\r\n"), "STORED\r\n");
  }
  EXPECT_GT(evicting.store.stats().evictions, 0u);
  EXPECT_LE(evicting.store.stats().bytes, small.memory_bytes);
  EXPECT_NE(evicting.feed("get k199\r\n"), "END\r\n");  // the newest survives

  session_harness refusing({.memory_bytes = 64 * 1024, .max_item_bytes = 4096, .evict = false});
  std::string last;
  for (int i = 0; i < 200 && last != "SERVER_ERROR out of memory storing object\r\n"; ++i) {
    last = refusing.feed("set k" + std::to_string(i) + " 0 0 1000\r\n" + value + "\r\n");
  }
  EXPECT_EQ(last, "SERVER_ERROR out of memory storing object\r\n");
  EXPECT_EQ(refusing.store.stats().evictions, 0u);
  EXPECT_NE(refusing.feed("get k0\r\n"), "END\r\n");  // nothing was evicted
}

TEST(Session, StatsReportCounters) {
  session_harness h;
  h.feed("set k 0 0 1\r\nx\r\nget k\r\nget nothere\r\n");
  const std::string stats = h.feed("stats\r\n");
  EXPECT_NE(stats.find("STAT cmd_get 2\r\n"), std::string::npos);
  EXPECT_NE(stats.find("STAT get_hits 1\r\n"), std::string::npos);
  EXPECT_NE(stats.find("STAT curr_items 1\r\n"), std::string::npos);
  EXPECT_EQ(stats.substr(stats.size() - 5), "END\r\n");
  EXPECT_NE(h.feed("stats settings\r\n").find("STAT item_size_max"), std::string::npos);
  EXPECT_EQ(h.feed("stats nonsense\r\n"), "ERROR\r\n");
}

}  // namespace
}  // namespace ferrite::kv
