// How the cpnvm engine's hash table sits in its program image (CpNvm, docs/checkpointing.md):
// a table header under the image root "ferrite-kv", an array of bucket heads, and items in
// singly linked chains. Links are image offsets from the start of the whole image (CpNvm's
// first page is never an item, so 0 is "none"), not pointers, so every hop can be checked
// against the image's size before it is followed: after a restart the image comes back from
// the pool, and the media is never trusted (cpnvm_engine.cpp validates every chain at open).
//
// The table is a plain lock-based structure; it is crash-consistent only because every write
// to it is marked and CpNvm checkpoints whole epochs: after a crash the image is the state of
// the last committed epoch, in which every chain and every allocator list is as some moment
// between two requests left it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ferrite::kv {

struct cp_table {
  static constexpr std::uint64_t magic_value = 0x31564e50434b5646ull;  // "FKVCPNV1"
  std::uint64_t magic;
  std::uint64_t version;
  std::uint64_t bucket_count;    // a power of two, at least the stripe count
  std::uint64_t buckets;         // image offset of bucket_count links
  std::uint64_t seed;            // seeded_key_hash's
  std::uint64_t worker_threads;  // thread logs kept for workers (the image has one more)
  std::uint64_t log_bytes;       // each thread's log: a thread checkpoints after marking a quarter
  std::uint64_t identity_check;  // of the seven words above
  alignas(64) std::uint64_t last_cas;  // the last CAS id issued (its own line: every store writes it)
  alignas(64) std::uint64_t flush_cas_limit;  // flush_all: ids up to it are gone
  std::int64_t flush_at;                      // flush_all <delay>: stored up to it dies then

  [[nodiscard]] std::uint64_t identity() const {
    std::uint64_t h = 0x6a09e667f3bcc909ull;
    for (const std::uint64_t w : {magic, version, bucket_count, buckets, seed, worker_threads, log_bytes}) {
      h = (h ^ w) * 0x100000001b3ull;
      h ^= h >> 29;
    }
    return h;
  }
};

struct cp_item {
  std::uint64_t next;  // image offset of the next item of the bucket, 0 at the end
  std::uint64_t hash;  // seeded_key_hash(key): picks the bucket, checked at open
  std::uint64_t cas;
  std::int64_t stored_at;
  std::int64_t expires_at;  // 0: never
  std::uint32_t flags;
  std::uint32_t key_length;
  std::uint32_t value_length;
  std::uint32_t reserved;
  // then the key's bytes, then the value's

  [[nodiscard]] std::string_view key() const { return {reinterpret_cast<const char*>(this + 1), key_length}; }
  [[nodiscard]] std::string_view value() const {
    return {reinterpret_cast<const char*>(this + 1) + key_length, value_length};
  }
  [[nodiscard]] char* payload() { return reinterpret_cast<char*>(this + 1); }
  [[nodiscard]] static constexpr std::size_t bytes_for(std::size_t key, std::size_t value) {
    return sizeof(cp_item) + key + value;
  }
};
static_assert(sizeof(cp_item) == 56);

}  // namespace ferrite::kv
