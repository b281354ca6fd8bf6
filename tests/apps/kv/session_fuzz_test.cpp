// Mutated request streams against one session after another on one engine: the session must
// never crash (this test runs under ASan+UBSan in CI), never consume more than it was given,
// never hold more than the memory limit, and leave the engine serving correct answers.
// FERRITE_KV_FUZZ_REQUESTS sets how many mutated streams (default 10,000, the floor).
#include "session_harness.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

namespace ferrite::kv {
namespace {

const std::vector<std::string> seeds = {
    "set k 1 0 3\r\nabc\r\n", "add k2 0 100 1\r\nx\r\n", "replace k 0 0 2\r\nzz\r\n",
    "append k 0 0 1\r\n+\r\n", "prepend k 0 0 1\r\n-\r\n", "cas k 0 0 1 5\r\ny\r\n",
    "get k k2 k3\r\n", "gets k\r\n", "gat 10 k\r\n", "gats 0 k k2\r\n", "touch k 5\r\n",
    "delete k\r\n", "delete k 0 noreply\r\n", "incr n 7\r\n", "decr n 3\r\n",
    "set n 0 0 2\r\n42\r\n", "flush_all 0\r\n", "version\r\n", "verbosity 1\r\n", "stats\r\n",
    "stats items\r\n", "mg k v k f c s t O1 q\r\n", "ms k 2 T10 F1 MA c\r\nhi\r\n", "md k C3 q\r\n",
    "ma n N0 J5 D2 MD v t c\r\n", "mn\r\n", "set big 0 0 2000\r\n" + std::string(2000, 'b') + "\r\n",
};

// Numbers that have broken parsers before: signs, overflow, 32-bit edges, garbage.
const std::vector<std::string> nasty_numbers = {
    "-1", "0", "4294967295", "4294967296", "2147483647", "2147483648", "18446744073709551616",
    "99999999999999999999999", "+5", "0x10", "1e9", "", " ", "nan"};

std::string mutate(std::string text, std::mt19937_64& random) {
  std::uniform_int_distribution<int> kind(0, 6);
  const int rounds = 1 + static_cast<int>(random() % 4);
  for (int r = 0; r < rounds; ++r) {
    const std::size_t at = text.empty() ? 0 : random() % text.size();
    switch (kind(random)) {
      case 0: if (!text.empty()) text[at] = static_cast<char>(random()); break;           // flip a byte
      case 1: text.insert(at, 1, static_cast<char>(random())); break;                      // insert one
      case 2: text.erase(at, 1 + random() % 8); break;                                     // cut some
      case 3: text.resize(at); break;                                                      // truncate
      case 4: text.insert(at, nasty_numbers[random() % nasty_numbers.size()]); break;      // a bad number
      case 5: text.insert(at, text.substr(at, random() % 64)); break;                      // repeat a slice
      default: text.insert(at, std::string(1 + random() % 3000, static_cast<char>(random()))); break;  // a run
    }
  }
  return text;
}

TEST(SessionFuzz, MutatedStreamsNeverCrashOrCorruptTheStore) {
  const char* configured = std::getenv("FERRITE_KV_FUZZ_REQUESTS");
  const long streams = configured != nullptr ? std::strtol(configured, nullptr, 10) : 10000;
  const engine_limits limits{.memory_bytes = 256 * 1024, .max_item_bytes = 4096, .evict = true};
  testing::session_harness shared(limits);  // one engine for all streams, as in a server
  std::mt19937_64 random(20261125);
  long closed = 0;
  std::size_t replied = 0;
  for (long n = 0; n < streams; ++n) {
    session one(shared.context);
    std::string stream;
    for (int i = 0, count = 1 + static_cast<int>(random() % 6); i < count; ++i) {
      stream += seeds[random() % seeds.size()];
    }
    stream = mutate(std::move(stream), random);
    // Arrives in random pieces, as TCP may deliver it.
    std::string pending, out;
    std::size_t offered = 0;
    bool done = false;
    while (offered < stream.size() && !done) {
      const std::size_t piece = std::min<std::size_t>(stream.size() - offered, 1 + random() % 700);
      pending.append(stream, offered, piece);
      offered += piece;
      const session::progress progress = one.handle(pending, out);
      ASSERT_LE(progress.consumed, pending.size());
      pending.erase(0, progress.consumed);
      done = progress.close;
    }
    closed += done ? 1 : 0;
    replied += out.size();
    ASSERT_LE(shared.store.stats().bytes, limits.memory_bytes);
  }
  // The engine still answers exactly.
  session check(shared.context);
  std::string out;
  check.handle("set after 3 0 5\r\nfuzzy\r\nget after\r\n", out);
  EXPECT_EQ(out, "STORED\r\nVALUE after 3 5\r\nfuzzy\r\nEND\r\n");
  EXPECT_GT(replied, static_cast<std::size_t>(streams));  // the streams were answered, not ignored
  std::printf("%ld mutated streams, %ld closed by the session, %zu reply bytes\n", streams, closed, replied);
}

}  // namespace
}  // namespace ferrite::kv
