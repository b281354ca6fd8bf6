// How a durable ferrite-kv item sits in its heap block (the soft engine, soft_engine.hpp):
// a fixed header, the key, the value. The header carries everything the index needs to be
// rebuilt and checked: the key's 128-bit digest (the index's key), lengths, flags, expiry,
// CAS id, and a checksum over the header and the key.
//
// Written once, before the block is published in the index (pwb over the whole block, one
// pfence), never changed afterwards except `expires_at` (touch, gat: one aligned 8-byte store,
// its own pwb + pfence), which the checksum leaves out for that reason. The value's bytes are
// not covered by the checksum: they are never used as a size, an offset or a pointer, and
// hashing every value at each restart would make recovery cost the data's size.
#pragma once

#include "key_hash.hpp"

#include "ferrite/pmem/checksum.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace ferrite::kv {

using key_digest = std::array<std::uint64_t, 2>;

struct item_header {
  static constexpr std::uint64_t magic_value = 0x314d455449564b46ull;  // "FKVITEM1"
  std::uint64_t magic;
  std::uint64_t cas;
  std::int64_t stored_at;
  std::int64_t expires_at;  // the one field written after publication
  std::uint32_t flags;
  std::uint32_t key_length;
  std::uint32_t value_length;
  std::uint32_t reserved;
  key_digest digest;
  std::uint64_t checksum;

  [[nodiscard]] std::string_view key() const {
    return {reinterpret_cast<const char*>(this + 1), key_length};
  }
  [[nodiscard]] std::string_view value() const {
    return {reinterpret_cast<const char*>(this + 1) + key_length, value_length};
  }
  [[nodiscard]] static std::size_t bytes_for(std::size_t key, std::size_t value) {
    return sizeof(item_header) + key + value;
  }

  // FNV-1a over the header with expires_at and checksum taken as 0, then the key.
  [[nodiscard]] std::uint64_t compute_checksum() const {
    item_header copy;
    std::memcpy(&copy, this, sizeof copy);
    copy.expires_at = 0;
    copy.checksum = 0;
    return pmem::fnv1a64(key().data(), key().size(), pmem::fnv1a64(&copy, sizeof copy));
  }
};
static_assert(sizeof(item_header) == 72);

// What is wrong with the item in a block of `block_bytes` bytes, or nullptr when it is sound:
// every length is checked against the block before the key is read.
inline const char* item_problem(const item_header& item, std::size_t block_bytes) {
  if (item.magic != item_header::magic_value) return "no item header (magic)";
  if (item.key_length == 0 || item.key_length > 250) return "key length out of range";
  if (item_header::bytes_for(item.key_length, item.value_length) > block_bytes) return "lengths exceed the block";
  if (item.compute_checksum() != item.checksum) return "checksum mismatch";
  return nullptr;
}

// The index key: two FNV-1a passes with the pool's random seeds, each finished with a 64-bit
// mixer. Distinct keys with equal digests are possible (probability about n^2 / 2^129 for n
// keys); the engine compares the stored key on every read, so such a pair behaves as one
// slot (storing one displaces the other), never as a wrong answer.
[[nodiscard]] inline key_digest digest_of(std::string_view key, const std::array<std::uint64_t, 2>& seeds) {
  return {seeded_key_hash(key, seeds[0]), seeded_key_hash(key, seeds[1])};
}

}  // namespace ferrite::kv
