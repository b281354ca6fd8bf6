// The cpnvm engine (apps/kv/cpnvm_engine.hpp) without a server: what each durability mode
// keeps when the process dies (a child that _exits without closing), eviction and the memory
// limit, a reopen with every chain validated, and a damaged pool refused without a write (also
// one that was not closed, a lost table root, a free block that is also an item, an epoch
// count past any real one: found by the pool fuzz test, tests/fuzz).
#include "cpnvm_engine.hpp"
#include "pool_file.hpp"

#include "ferrite/error.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace ferrite::kv;
using namespace std::chrono_literals;

class CpnvmEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = "/dev/shm/ferrite-kv-cpnvm-test-" + std::to_string(::getpid());
    std::filesystem::remove(path_);
  }
  void TearDown() override {
    std::filesystem::remove(path_);
    std::filesystem::remove(path_.string() + "-strict");  // AFullImageEvictsOrRefusesWithNoEvict's, also when it fails
  }

  cpnvm_engine_options options(durability mode = durability::epoch) const {
    cpnvm_engine_options o;
    o.pool = path_;
    o.memory_bytes = 8u << 20;
    o.log_bytes = 8u << 20;
    o.worker_threads = 2;
    o.mode = mode;
    o.interval = 60s;  // no epoch commits by the clock during a test
    return o;
  }
  std::vector<char> bytes() const { return ferrite::kv::test::pool_bytes(path_); }
  void overwrite(const std::vector<char>& content) const { ferrite::kv::test::overwrite_pool(path_, content); }
  // Opening must throw damaged_pool whose message says `what`, and leave the file as it was.
  void expect_refused_unchanged(const std::string& what) const {
    ferrite::kv::test::expect_refused_unchanged<cpnvm_engine>(options(), what);
  }

  std::filesystem::path path_;
};

// Where the program image's parts lie in the file: its header (magic "FECPIMG1"; threads, log
// bytes), the epoch log's committed-epoch word, the persistent image.
struct image_layout {
  std::size_t header = 0, committed = 0, image = 0;
};
image_layout find_image(const std::vector<char>& content) {
  const std::string magic = "FECPIMG1";
  const auto at = std::search(content.begin(), content.end(), magic.begin(), magic.end());
  if (at == content.end()) return {};
  image_layout l;
  l.header = static_cast<std::size_t>(at - content.begin());
  std::uint32_t threads = 0;
  std::uint64_t log_bytes = 0;
  std::memcpy(&threads, &content[l.header + 12], 4);
  std::memcpy(&log_bytes, &content[l.header + 24], 8);
  l.committed = l.header + 64 + 64;                              // the region's line 1
  l.image = l.header + 64 + 3 * 64 + threads * log_bytes;  // after the identity, epoch lines, logs
  return l;
}

// The calling thread as a server worker for the scope: one batch at a time.
struct worker {
  // With no wake (as here) an idle worker quiesces at once, forcing a checkpoint of what it
  // marked: the tests below that give one see the server's way.
  explicit worker(cpnvm_engine& e, engine::worker_wake wake = {}) : engine(e) { engine.worker_started(std::move(wake)); }
  ~worker() { engine.worker_stopping(); }
  template <class F>
  void batch(F&& requests) {
    engine.batch_begin();
    requests();
    engine.batch_end();
  }
  cpnvm_engine& engine;
};

// prefix + i (built with append: GCC 12 warns falsely about "literal" + std::string).
std::string numbered(std::string prefix, int i) {
  prefix.append(std::to_string(i));
  return prefix;
}

store_outcome set(cpnvm_engine& e, std::string_view key, std::string_view value) {
  store_request r;
  r.key = key;
  r.value = value;
  return e.store(r, unix_now());
}

std::optional<std::string> get(cpnvm_engine& e, std::string_view key) {
  std::optional<std::string> out;
  e.get(key, unix_now(), std::nullopt, [&](const item_view& v) { out = std::string(v.value); });
  return out;
}

// In a child: one batch stores "a" and the worker goes idle (durable in both modes), the next
// batch stores "b" and the child dies without a checkpoint coming due.
void die_after_two_batches(const cpnvm_engine_options& o) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    cpnvm_engine e(o);
    worker w(e);
    w.batch([&] { set(e, "a", "first"); });
    e.worker_idle();
    w.batch([&] { set(e, "b", "second"); });
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST_F(CpnvmEngineTest, EpochModeLosesOnlyTheEpochThatHadNotCommitted) {
  die_after_two_batches(options(durability::epoch));
  cpnvm_engine e(options());
  worker w(e);
  EXPECT_FALSE(e.recovery().created);
  EXPECT_EQ(get(e, "a"), "first") << "an idle worker's writes are durable";
  EXPECT_EQ(get(e, "b"), std::nullopt) << "the last batch's epoch never committed";
  EXPECT_TRUE(e.check_items().empty());
}

// A child whose worker (given a wake, as the server's are) stores "a" and goes idle; `then`
// runs next, and the child dies without closing.
template <class Then>
void die_after_an_idle_write(const cpnvm_engine_options& o, Then then) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    cpnvm_engine e(o);
    then(e);
    ::_exit(::testing::Test::HasFailure() ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child's expectations failed";
}

TEST_F(CpnvmEngineTest, AnIdleEpochWorkerWaitsForTheIntervalsCheckpointInsteadOfForcingOne) {
  auto o = options();
  o.interval = 400ms;
  // Dies while the worker waits: the write was not forced into an epoch of its own.
  die_after_an_idle_write(o, [](cpnvm_engine& e) {
    worker w(e, [] {});
    w.batch([&] { set(e, "a", "first"); });
    const auto bound = e.worker_idle();
    if (!bound || *bound <= 0ns || *bound > 400ms) ::_exit(2);
    ::_exit(0);  // before the worker stops: stopping takes part in a checkpoint
  });
  {
    cpnvm_engine e(o);
    worker w(e);
    EXPECT_EQ(get(e, "a"), std::nullopt) << "the idle worker forced a checkpoint";
  }
  std::filesystem::remove(path_);
  // Waits as the server does (its timer), then takes part in the due checkpoint.
  die_after_an_idle_write(o, [](cpnvm_engine& e) {
    worker w(e, [] {});
    w.batch([&] { set(e, "a", "first"); });
    int waits = 0;
    while (const auto bound = e.worker_idle()) {
      std::this_thread::sleep_for(*bound);
      if (++waits > 1000) ::_exit(3);
    }
  });
  cpnvm_engine e(o);
  worker w(e);
  EXPECT_EQ(get(e, "a"), "first") << "durable once the interval's checkpoint came due";
}

TEST_F(CpnvmEngineTest, AThreadForcingACheckpointWakesAWaitingWorker) {
  // Epochs by the clock never come due (60 s): only the wake can end the waiting worker's
  // wait, and the forcing thread's checkpoint waits for it at the barrier.
  die_after_an_idle_write(options(), [](cpnvm_engine& e) {
    std::mutex m;
    std::condition_variable woken_cv;
    bool woken = false;
    std::atomic<bool> waiting{false}, timed_out{false};
    std::thread waiter([&] {
      worker w(e, [&] {
        const std::lock_guard held(m);
        woken = true;
        woken_cv.notify_one();
      });
      w.batch([&] { set(e, "a", "first"); });
      auto bound = e.worker_idle();
      if (!bound || *bound < 30s) ::_exit(4);
      waiting = true;
      while (bound) {
        std::unique_lock held(m);
        if (!woken_cv.wait_for(held, 10s, [&] { return woken; })) timed_out = true;
        woken = false;
        held.unlock();
        bound = e.worker_idle();  // quiesces: takes part in the forced checkpoint
      }
      ::pause();  // a server worker waits for input here, quiescent
    });
    waiter.detach();
    while (!waiting) std::this_thread::sleep_for(1ms);
    worker w(e);  // no wake: its idle forces a checkpoint of "b", which must wake the waiter
    w.batch([&] { set(e, "b", "second"); });
    e.worker_idle();
    if (timed_out) ::_exit(5);
  });
  cpnvm_engine e(options());
  worker w(e);
  EXPECT_EQ(get(e, "a"), "first") << "the woken worker's write went into the forced checkpoint";
  EXPECT_EQ(get(e, "b"), "second");
}

TEST_F(CpnvmEngineTest, SyncModeKeepsEveryBatchWhoseRepliesWentOut) {
  die_after_two_batches(options(durability::sync));
  cpnvm_engine e(options(durability::sync));
  worker w(e);
  EXPECT_EQ(get(e, "a"), "first");
  EXPECT_EQ(get(e, "b"), "second") << "batch_end returned after the epoch holding it was durable";
  EXPECT_EQ(e.recovery().items, 2u);
}

TEST_F(CpnvmEngineTest, ACleanReopenKeepsItemsAndNeverRepeatsACasId) {
  std::uint64_t last_cas = 0;
  {
    cpnvm_engine e(options());
    worker w(e);
    w.batch([&] {
      for (int i = 0; i < 2000; ++i) last_cas = set(e, numbered("key", i), std::string(i % 300, 'v')).cas;
      store_request append{store_mode::append, "key7", "+tail"};
      EXPECT_EQ(e.store(append, unix_now()).result, store_result::stored);
      EXPECT_EQ(e.remove("key8", 0, unix_now()), remove_result::deleted);
    });
  }
  cpnvm_engine e(options());
  worker w(e);
  EXPECT_EQ(e.recovery().items, 1999u);
  EXPECT_EQ(get(e, "key7"), std::string(7, 'v') + "+tail");
  EXPECT_EQ(get(e, "key8"), std::nullopt);
  EXPECT_EQ(get(e, "key1999"), std::string(1999 % 300, 'v'));
  EXPECT_GT(set(e, "new", "x").cas, last_cas + (std::uint64_t{1} << 31));
  EXPECT_TRUE(e.check_items().empty()) << e.check_items().front();
}

TEST_F(CpnvmEngineTest, AFullImageEvictsOrRefusesWithNoEvict) {
  cpnvm_engine e(options());
  worker w(e);
  const std::string value(1000, 'x');
  int refused = 0;
  w.batch([&] {
    for (int i = 0; i < 20000; ++i) refused += set(e, numbered("k", i), value).result != store_result::stored;
  });
  EXPECT_EQ(refused, 0) << "eviction makes room";
  EXPECT_GT(e.stats().evictions, 0u);
  EXPECT_EQ(get(e, "k19999"), value) << "the newest item is kept";
  EXPECT_TRUE(e.check_items().empty());

  auto strict_options = options();
  strict_options.pool = path_.string() + "-strict";
  strict_options.evict = false;
  {
    cpnvm_engine strict(strict_options);
    worker ws(strict);
    store_result last = store_result::stored;
    ws.batch([&] {
      for (int i = 0; i < 20000 && last == store_result::stored; ++i)
        last = set(strict, numbered("k", i), value).result;
    });
    EXPECT_EQ(last, store_result::out_of_memory);
    EXPECT_EQ(strict.stats().evictions, 0u);
  }
}

TEST_F(CpnvmEngineTest, ItemsBeyondTheBlockLimitAreTooLarge) {
  auto o = options();
  o.max_item_bytes = 64u << 20;
  cpnvm_engine e(o);
  worker w(e);
  const std::string big(3u << 20, 'b');  // more than a quarter of the 8 MiB log
  EXPECT_EQ(set(e, "big", big).result, store_result::too_large);
  const std::string fits(1u << 20, 'f');  // memcached's -I 1m: a 2 MiB block
  EXPECT_EQ(set(e, "fits", fits).result, store_result::stored);
}

// A pool written with a larger -I than it is reopened with is not damaged: its items were
// validated against that -I and called damaged. Now the bound is the largest -I there is; the
// big item stays readable, and only new items obey the smaller -I.
TEST_F(CpnvmEngineTest, ReopeningWithASmallerItemSizeKeepsTheLargerItems) {
  const std::string big(100u << 10, 'b');
  {
    cpnvm_engine e(options());
    worker w(e);
    w.batch([&] { EXPECT_EQ(set(e, "big", big).result, store_result::stored); });
  }
  auto smaller = options();
  smaller.max_item_bytes = 16u << 10;
  cpnvm_engine e(smaller);
  worker w(e);
  EXPECT_EQ(e.recovery().items, 1u);
  EXPECT_EQ(get(e, "big"), big);
  EXPECT_EQ(set(e, "big2", big).result, store_result::too_large);
  EXPECT_TRUE(e.check_items().empty()) << e.check_items().front();
}

TEST_F(CpnvmEngineTest, MoreWorkersThanThePoolWasMadeForIsRefused) {
  { cpnvm_engine e(options()); }
  auto more = options();
  more.worker_threads = 3;
  const auto before = bytes();
  EXPECT_THROW(cpnvm_engine e(more), ferrite::usage_error);
  EXPECT_EQ(bytes(), before);
}

TEST_F(CpnvmEngineTest, ADamagedItemIsRefusedAtOpenAndNothingIsWritten) {
  {
    cpnvm_engine e(options());
    worker w(e);
    w.batch([&] { set(e, "victim-key-0123456789", "value"); });
  }
  // Every copy of the key in the file (the persistent image, and the log's records): the
  // key length just before it becomes an impossible one.
  auto content = bytes();
  const std::string key = "victim-key-0123456789";
  int hits = 0;
  for (auto at = std::search(content.begin(), content.end(), key.begin(), key.end()); at != content.end();
       at = std::search(at + 1, content.end(), key.begin(), key.end())) {
    const std::uint32_t impossible = 4000;
    std::memcpy(&*(at - 12), &impossible, 4);  // cp_item::key_length, 12 bytes before the key
    ++hits;
  }
  ASSERT_GT(hits, 0);
  overwrite(content);
  try {
    cpnvm_engine e(options());
    FAIL() << "opened a damaged pool";
  } catch (const ferrite::damaged_pool& e) {
    EXPECT_NE(std::string(e.what()).find("restore the pool"), std::string::npos) << e.what();
  }
  EXPECT_EQ(bytes(), content) << "a failed open writes nothing";
}

// A damaged item in a pool whose process died: the store's open replayed and recovered the
// pool and its close marked it clean, before the engine found the item; the refused file had
// changed (the clean-shutdown flag). The open is rehearsed on a private copy now.
TEST_F(CpnvmEngineTest, ADamagedItemInAPoolThatWasNotClosedIsRefusedUnchanged) {
  die_after_two_batches(options(durability::sync));
  auto content = bytes();
  const std::string key = "a";  // the item "a" -> "first": its key byte, 56 bytes into the item
  const std::string value = "afirst";
  int hits = 0;
  for (auto at = std::search(content.begin(), content.end(), value.begin(), value.end()); at != content.end();
       at = std::search(at + 1, content.end(), value.begin(), value.end())) {
    *at = 'z';  // the key no longer hashes to the item's hash
    ++hits;
  }
  ASSERT_GT(hits, 0);
  overwrite(content);
  expect_refused_unchanged("does not hash");
}

// The root "ferrite-kv" lost its name: the engine used to create a new, empty table (every
// item gone, silently). An image that has allocated anything has its table.
TEST_F(CpnvmEngineTest, AMissingTableRootIsRefusedNotCreatedEmpty) {
  {
    cpnvm_engine e(options());
    worker w(e);
    w.batch([&] { set(e, "kept", "value"); });
  }
  auto content = bytes();
  const std::string root("ferrite-kv\0", 11);  // NUL-padded: not the layout "ferrite-kv-cpnvm-1"
  int hits = 0;
  for (auto at = std::search(content.begin(), content.end(), root.begin(), root.end()); at != content.end();
       at = std::search(at + 1, content.end(), root.begin(), root.end())) {
    *at = 'F';
    ++hits;
  }
  ASSERT_GT(hits, 0);
  overwrite(content);
  expect_refused_unchanged("no root");
}

// The allocator's free list of 128-byte blocks made to start at a live item: the next store
// of that size would have been written over it. Every free block must lie outside the items.
TEST_F(CpnvmEngineTest, AFreeBlockThatIsAlsoAnItemIsRefused) {
  {
    cpnvm_engine e(options());
    worker w(e);
    w.batch([&] { set(e, "victim-key-0123456789", "value"); });  // 56 + 26 bytes: the 128-byte class
  }
  auto content = bytes();
  const image_layout l = find_image(content);
  ASSERT_NE(l.header, 0u);
  const std::string key = "victim-key-0123456789value";
  const auto at = std::search(content.begin() + static_cast<std::ptrdiff_t>(l.image), content.end(), key.begin(), key.end());
  ASSERT_NE(at, content.end());
  const std::uint64_t item = static_cast<std::uint64_t>(at - content.begin()) - 56 - l.image;
  std::memcpy(&content[l.image + 2048 + 8 + 8 * 2], &item, 8);  // the meta page's free_heads[2]
  overwrite(content);
  expect_refused_unchanged("overlaps");
}

// A committed-epoch word of ~0: the next epoch wrapped to 0, its commit threw inside the
// checkpoint's barrier and the open hung. Epoch counts that high are damage.
TEST_F(CpnvmEngineTest, ACommittedEpochPastAnyCountIsRefusedNotAHang) {
  {
    cpnvm_engine e(options());
    worker w(e);
    w.batch([&] { set(e, "kept", "value"); });
  }
  auto content = bytes();
  const image_layout l = find_image(content);
  ASSERT_NE(l.header, 0u);
  const std::uint64_t past = ~std::uint64_t{0};
  std::memcpy(&content[l.committed], &past, 8);
  overwrite(content);
  expect_refused_unchanged("committed epoch");
}

}  // namespace
