// The 64-bit hash of a key that both durable engines build on: FNV-1a from a per-pool random
// seed, finished with a 64-bit mixer (murmur3's fmix64) so that the low bits, which pick
// buckets and stripes, depend on every byte. Not a keyed PRF: a client that learned the
// seed could aim keys at one bucket (slower, never wrong). SipHash would close that.
#pragma once

#include "ferrite/pmem/checksum.hpp"

#include <cstdint>
#include <string_view>

namespace ferrite::kv {

[[nodiscard]] inline std::uint64_t seeded_key_hash(std::string_view key, std::uint64_t seed) {
  std::uint64_t h = pmem::fnv1a64(key.data(), key.size(), seed);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

}  // namespace ferrite::kv
