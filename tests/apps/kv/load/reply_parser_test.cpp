// ferrite-kv-load's reply checks: hits, misses and STORED parse at their exact length whatever
// follows, every prefix of a reply is incomplete (TCP may split it anywhere), and every wrong
// answer is bad with its reason, as early as the bytes show it.
#include "load/reply_parser.hpp"

#include <gtest/gtest.h>

#include <string>

namespace ferrite::kv::load {
namespace {

const std::string hit = "VALUE key:7 0 5\r\nhello\r\nEND\r\n";

TEST(ReplyParser, MissIsEnd) {
  const parsed_reply r = parse_get_reply("END\r\n", "key:7", 5);
  EXPECT_EQ(r.kind, reply_kind::miss);
  EXPECT_EQ(r.length, 5u);
}

TEST(ReplyParser, HitTakesExactlyItsBytes) {
  const parsed_reply r = parse_get_reply(hit + "STORED\r\n", "key:7", 5);
  EXPECT_EQ(r.kind, reply_kind::hit);
  EXPECT_EQ(r.length, hit.size());
}

TEST(ReplyParser, HitWithCasField) {
  const std::string with_cas = "VALUE key:7 3 5 12345\r\nhello\r\nEND\r\n";
  const parsed_reply r = parse_get_reply(with_cas, "key:7", 5);
  EXPECT_EQ(r.kind, reply_kind::hit);
  EXPECT_EQ(r.length, with_cas.size());
}

TEST(ReplyParser, ValueMayHoldCrLfAndEnd) {
  const std::string tricky = "VALUE key:7 0 7\r\nEND\r\n\r\n\r\nEND\r\n";
  const parsed_reply r = parse_get_reply(tricky, "key:7", 7);
  EXPECT_EQ(r.kind, reply_kind::hit);
  EXPECT_EQ(r.length, tricky.size());
}

TEST(ReplyParser, EveryPrefixIsIncomplete) {
  for (const std::string& whole : {hit, std::string("END\r\n")}) {
    for (std::size_t n = 0; n < whole.size(); ++n) {
      const parsed_reply r = parse_get_reply(std::string_view(whole).substr(0, n), "key:7", 5);
      EXPECT_EQ(r.kind, reply_kind::incomplete) << n << " bytes of " << whole;
      EXPECT_EQ(r.length, 0u);
    }
  }
  const std::string stored = "STORED\r\n";
  for (std::size_t n = 0; n < stored.size(); ++n)
    EXPECT_EQ(parse_set_reply(std::string_view(stored).substr(0, n)).kind, reply_kind::incomplete) << n;
}

TEST(ReplyParser, StoredIsTheOnlyGoodSetReply) {
  const parsed_reply r = parse_set_reply("STORED\r\nEND\r\n");
  EXPECT_EQ(r.kind, reply_kind::stored);
  EXPECT_EQ(r.length, 8u);
  for (const char* wrong : {"NOT_STORED\r\n", "SERVER_ERROR out of memory storing object\r\n", "ERROR\r\n",
                            "CLIENT_ERROR bad data chunk\r\n", "EXISTS\r\n", "END\r\n"}) {
    const parsed_reply bad = parse_set_reply(wrong);
    EXPECT_EQ(bad.kind, reply_kind::bad) << wrong;
    EXPECT_FALSE(bad.problem.empty()) << wrong;
  }
}

struct bad_case {
  const char* input;
  const char* reason;  // a word of the expected problem
};

TEST(ReplyParser, WrongGetRepliesAreBadWithTheirReason) {
  const bad_case cases[] = {
      {"VALUE key:8 0 5\r\nhello\r\nEND\r\n", "another key"},
      {"VALUE key:7 0 4\r\nhell\r\nEND\r\n", "another length"},
      {"VALUE key:7 0 5\r\nhelloXXEND\r\n", "\\r\\n"},
      {"VALUE key:7 0 5\r\nhello\r\nVALUE key:7 0 5\r\nhello\r\nEND\r\n", "no END"},
      {"VALUE key:7 x 5\r\nhello\r\nEND\r\n", "flags"},
      {"VALUE key:7 0 five\r\nhello\r\nEND\r\n", "length"},
      {"VALUE key:7 0 5 1 2\r\nhello\r\nEND\r\n", "extra"},
      {"VALUE key:7 0 -5\r\nhello\r\nEND\r\n", "length"},
      {"ERROR\r\n", "error reply"},
      {"SERVER_ERROR busy\r\n", "error reply"},
      {"CLIENT_ERROR line too long\r\n", "error reply"},
      {"STORED\r\n", "neither"},
      {"\r\n", "neither"},
  };
  for (const bad_case& c : cases) {
    const parsed_reply r = parse_get_reply(c.input, "key:7", 5);
    EXPECT_EQ(r.kind, reply_kind::bad) << c.input;
    EXPECT_NE(r.problem.find(c.reason), std::string_view::npos) << c.input << " -> " << r.problem;
  }
}

TEST(ReplyParser, BrokenValueIsBadBeforeTheRestArrives) {
  // The bytes after the value are wrong already; no need to wait for END.
  EXPECT_EQ(parse_get_reply("VALUE key:7 0 5\r\nhelloX", "key:7", 5).kind, reply_kind::bad);
  EXPECT_EQ(parse_get_reply("VALUE key:7 0 5\r\nhello\r\nVAL", "key:7", 5).kind, reply_kind::bad);
  EXPECT_EQ(parse_get_reply("VALUE key:7 0 5\r\nhello\r\nEN", "key:7", 5).kind, reply_kind::incomplete);
}

TEST(ReplyParser, EndlessLineIsBad) {
  const std::string endless(max_line + 2, 'V');
  EXPECT_EQ(parse_get_reply(endless, "key:7", 5).kind, reply_kind::bad);
  EXPECT_EQ(parse_set_reply(endless).kind, reply_kind::bad);
  EXPECT_EQ(parse_get_reply(endless.substr(0, max_line), "key:7", 5).kind, reply_kind::incomplete);
}

}  // namespace
}  // namespace ferrite::kv::load
