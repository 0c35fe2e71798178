// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The range kind's hash and layout (docs/FORMAT.md, "7: range"), shared by
// its builder and reader.
//
// A filter of m distinct hashes in [0, r) keeps them sorted, in Elias-Fano
// form: hash v splits into high = v >> l and low = v mod 2^l. The low
// parts are packed, l bits each, LSB-first; the upper bit array has, for
// the i-th hash (0-based), a one at position high + i, and zeros elsewhere,
// so bucket j (the hashes of high j) starts right after the j-th zero.
// Every 2^kRangeGroupShift buckets a u32 sample counts the hashes of the
// buckets before, so a successor query scans at most one group.

#ifndef SSTFILTER_POLICY_RANGE_RANGE_IMPL_H_
#define SSTFILTER_POLICY_RANGE_RANGE_IMPL_H_

#include <cstddef>
#include <cstdint>

#include "policy/primitives.h"
#include "sstfilter/hash.h"

namespace sstfilter {
namespace internal {

inline constexpr int kRangeGroupShift = 9;  // 512 buckets per sample
// A range of images spanning more blocks than this reads "may contain".
inline constexpr uint64_t kRangeMaxBlocks = 16;
// kind_params: u8 len, u16le offset, u8 block_shift, u8 low_bits,
// u64le universe, u32le count.
inline constexpr size_t kRangeParamsSize = 17;
// Universes stay below 2^62, so that x + n never overflows in a query.
inline constexpr uint64_t kRangeMaxUniverse = uint64_t{1} << 62;

inline int FloorLog2(uint64_t x) { return 63 - __builtin_clzll(x); }  // x > 0
inline int CeilLog2(uint64_t x) {                                     // x > 0
  return x <= 1 ? 0 : FloorLog2(x - 1) + 1;
}

// The block hash q: XXH3 of the block number's 8 little-endian bytes with
// the filter's seed, mapped onto [0, universe) by FastRange64.
inline uint64_t RangeBlockHash(uint64_t block, uint64_t seed,
                               uint64_t universe) {
  uint8_t bytes[8];
  EncodeFixed64(bytes, block);
  const uint64_t h =
      Hash64(std::string_view(reinterpret_cast<const char*>(bytes), 8), seed);
  return FastRange64(h, universe);
}

// h(x) = (q(x >> s) + (x mod 2^s)) mod r. Inside one block of 2^s images h
// is x plus a constant, mod r: order and distances are kept, so a range
// piece inside a block maps onto one window of r (wrapping at most once).
// REQUIRES: 2^s <= r / 2.
inline uint64_t RangeHash(uint64_t image, int block_shift, uint64_t seed,
                          uint64_t universe) {
  const uint64_t low = image & ((uint64_t{1} << block_shift) - 1);
  const uint64_t h = RangeBlockHash(image >> block_shift, seed, universe) + low;
  return h >= universe ? h - universe : h;
}

// Sizes implied by (count, universe, low_bits); all in bits or words of 8
// bytes. payload bytes = 8 * (low_words + upper_words) + 4 * groups.
struct RangeLayout {
  uint64_t buckets = 0;     // ((universe - 1) >> low_bits) + 1
  uint64_t upper_bits = 0;  // count + buckets
  uint64_t low_words = 0;   // ceil(count * low_bits / 64)
  uint64_t upper_words = 0;
  uint64_t groups = 0;  // ceil(buckets / 2^kRangeGroupShift)

  uint64_t PayloadSize() const {
    return 8 * (low_words + upper_words) + 4 * groups;
  }
};

// REQUIRES: 0 < universe < kRangeMaxUniverse, low_bits <= FloorLog2(universe),
// count <= universe.
inline RangeLayout MakeRangeLayout(uint64_t count, uint64_t universe,
                                   int low_bits) {
  RangeLayout l;
  l.buckets = ((universe - 1) >> low_bits) + 1;
  l.upper_bits = count + l.buckets;
  l.low_words = (count * static_cast<uint64_t>(low_bits) + 63) / 64;
  l.upper_words = (l.upper_bits + 63) / 64;
  l.groups = ((l.buckets - 1) >> kRangeGroupShift) + 1;
  return l;
}

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_POLICY_RANGE_RANGE_IMPL_H_
