// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Hot code of the two Bloom kinds, header-only so queries inline.
//
// Standard Bloom (kind 1), m bits, k probes, from one 64-bit hash h:
// x_0 = h, x_{i+1} = x_i * kGolden64 (mod 2^64), probe i tests bit
// FastRange64(x_i, m). Multiply-shift keeps m free of power-of-two rounding.
// The multiply re-mixes the high bits for every probe: plain double hashing
// (h + i d) puts the probes of a key in an arithmetic progression, which in
// filters of a few bytes (LevelDB, one filter per large value) collide:
// 1.29% FPR at one key in 16 bits where this sequence gives 0.12%.
//
// Blocked Bloom (kind 2), B blocks of 512 bits (64 bytes, one cache line):
// block = FastRange64(h, B) (the high bits of h choose it); inside it, with
// x = low 32 bits of h, probe i tests bit x_i >> 23 (9 bits), where
// x_0 = x and x_{i+1} = x_i * 0x9E3779B9 (mod 2^32). The scheme follows
// RocksDB's FastLocalBloom (util/bloom_impl.h): one cache line per key,
// probes from repeated 32-bit multiplication. One cache miss per query, for
// 1.17x the FPR of a standard Bloom of the same size at 10 bits/key
// (BlockedBloomFpr against StandardBloomFpr, params.h).
//
// Bits are numbered LSB-first within bytes: bit j is (byte[j / 8] >> (j % 8))
// & 1, so the payload is byte-order independent.

#ifndef SSTFILTER_POLICY_BLOOM_IMPL_H_
#define SSTFILTER_POLICY_BLOOM_IMPL_H_

#include <cstddef>
#include <cstdint>

#include "policy/primitives.h"

namespace sstfilter {
namespace internal {

// The probe sequence of the standard Bloom (and counting Bloom) kinds, the
// only place it is written: Next() returns probe i = FastRange64(x_i, m),
// x_0 = h, x_{i+1} = x_i * kGolden64, for i = 0, 1, 2...
class StandardProbes {
 public:
  StandardProbes(uint64_t h, uint64_t m) : x_(h), m_(m) {}
  uint64_t Next() {
    const uint64_t probe = FastRange64(x_, m_);
    x_ *= kGolden64;
    return probe;
  }

 private:
  uint64_t x_;
  const uint64_t m_;
};

struct StandardBloomImpl {
  // Probes a batched query prefetches (see Prefetch).
  static constexpr int kQueryPrefetchProbes = 2;

  static void Add(uint64_t h, uint8_t* data, uint64_t num_bits,
                  int num_probes) {
    StandardProbes probes(h, num_bits);
    for (int i = 0; i < num_probes; i++) {
      const uint64_t bit = probes.Next();
      data[bit >> 3] |= static_cast<uint8_t>(1u << (bit & 7));
    }
  }
  // Tests the probes four at a time, one branch per group: an absent key
  // passes a group with chance about 1/16, so that branch is predicted,
  // where an exit per probe (each a coin toss at half the bits set) cost
  // about one misprediction per query; the group's loads overlap.
  static bool MayMatch(uint64_t h, const uint8_t* data, uint64_t num_bits,
                       int num_probes) {
    StandardProbes probes(h, num_bits);
    for (int i = 0; i < num_probes; i += 4) {
      const int end = i + 4 < num_probes ? i + 4 : num_probes;
      unsigned all = 1;
      for (int j = i; j < end; j++) {
        const uint64_t bit = probes.Next();
        all &= static_cast<unsigned>(data[bit >> 3]) >> (bit & 7);
      }
      if ((all & 1) == 0) return false;
    }
    return true;
  }
  // Prefetches the bytes of the first `num_probes` probes: builders pass
  // every probe (and PrefetchForWrite), queries the first two (a negative
  // query usually ends within them: each probe hits a set bit with
  // probability ~1/2).
  template <typename Prefetcher>
  SSTFILTER_ALWAYS_INLINE static void Prefetch(uint64_t h, const uint8_t* data,
                                               uint64_t num_bits,
                                               int num_probes,
                                               Prefetcher prefetch) {
    PrefetchCells<1>(h, data, num_bits, num_probes, prefetch);
  }
  // The same over m cells of kCellBits bits each (counting Bloom: 4).
  template <int kCellBits, typename Prefetcher>
  SSTFILTER_ALWAYS_INLINE static void PrefetchCells(uint64_t h,
                                                    const uint8_t* data,
                                                    uint64_t m, int num_probes,
                                                    Prefetcher prefetch) {
    static_assert(kCellBits == 1 || kCellBits == 2 || kCellBits == 4);
    constexpr int kShift = kCellBits == 1 ? 3 : kCellBits == 2 ? 2 : 1;
    StandardProbes probes(h, m);
    for (int i = 0; i < num_probes; i++) {
      prefetch(data + (probes.Next() >> kShift));
    }
  }
};

// The probes of a blocked Bloom key inside its block, the only place they
// are written: Next() returns bit x_i >> 23 of the 512-bit block, x_0 = low
// 32 bits of h, x_{i+1} = x_i * kGolden32.
class BlockedProbes {
 public:
  explicit BlockedProbes(uint64_t h) : x_(static_cast<uint32_t>(h)) {}
  static constexpr int kBlockBitsLog2 = 9;  // 512-bit blocks

  uint32_t Next() {
    const uint32_t bit = x_ >> (32 - kBlockBitsLog2);
    x_ *= kGolden32;
    return bit;
  }

 private:
  uint32_t x_;
};

struct BlockedBloomImpl {
  static constexpr size_t kBlockBytes = 64;

  // The block of a key: the high bits of h choose it.
  template <typename Byte>
  static Byte* Block(uint64_t h, Byte* data, uint64_t num_blocks) {
    return data + FastRange64(h, num_blocks) * kBlockBytes;
  }
  static void Add(uint64_t h, uint8_t* data, uint64_t num_blocks,
                  int num_probes) {
    AddInBlock(h, Block(h, data, num_blocks), num_probes);
  }
  static void AddInBlock(uint64_t h, uint8_t* block, int num_probes) {
    BlockedProbes probes(h);
    for (int i = 0; i < num_probes; i++) {
      const uint32_t bit = probes.Next();
      block[bit >> 3] |= static_cast<uint8_t>(1u << (bit & 7));
    }
  }
  // Tests the probes two at a time and stops at the first pair with a
  // clear bit. All probes are in one block, so the extra load is nearly
  // free, while an exit per probe is a branch that negative queries
  // mispredict often. With no exit every query would wait for both cache
  // lines a misaligned block spans; with an exit per pair most absent keys
  // need only the first.
  SSTFILTER_ALWAYS_INLINE static bool MayMatchInBlock(uint64_t h,
                                                      const uint8_t* block,
                                                      int num_probes) {
    BlockedProbes probes(h);
    int i = 0;
    // A reader with a fixed probe count (bloom_reader.cc) gets no loop.
#pragma GCC unroll 8
    for (; i + 2 <= num_probes; i += 2) {
      const uint32_t b0 = probes.Next();
      const uint32_t b1 = probes.Next();
      if ((BitAt(block, b0) & BitAt(block, b1) & 1) == 0) return false;
    }
    if (i < num_probes) return (BitAt(block, probes.Next()) & 1) != 0;
    return true;
  }
  // Bit b of a block in the low bit (the rest is garbage): bit b & 7 of
  // byte b >> 3, read as bit b & 63 of the block's little-endian word
  // b >> 6, which saves an instruction per probe.
  SSTFILTER_ALWAYS_INLINE static uint64_t BitAt(const uint8_t* block,
                                                uint32_t b) {
    return DecodeFixed64(block + 8 * size_t{b >> 6}) >> (b & 63);
  }
  // A single query fetches both cache lines of its block first, as a
  // batched one does: the bytes an engine hands the reader are rarely
  // 64-byte aligned (a block cache's malloc gives 16), so most blocks span
  // two lines, and a probe that reaches the second line would otherwise
  // wait for a second miss after the first. With the prefetch both misses
  // overlap, as in RocksDB's FastLocalBloom (docs/BENCHMARKS.md, "Blocked
  // Bloom and cuckoo at 10^6 and 10^7 keys", run P, has the measurement).
  SSTFILTER_ALWAYS_INLINE static bool MayMatch(uint64_t h, const uint8_t* data,
                                               uint64_t num_blocks,
                                               int num_probes) {
    return MayMatchInBlock(h, Locate(h, data, num_blocks), num_probes);
  }
  // Where every query of h starts, single or batched: its block, with both
  // of the block's cache lines prefetched.
  SSTFILTER_ALWAYS_INLINE static const uint8_t* Locate(uint64_t h,
                                                       const uint8_t* data,
                                                       uint64_t num_blocks) {
    const uint8_t* block = Block(h, data, num_blocks);
    PrefetchBlock(block, PrefetchForRead());
    return block;
  }
  // Prefetches the block of h (builders, Locate). The payload need
  // not be 64-byte aligned: a block may span two cache lines, so both ends
  // are fetched.
  template <typename Prefetcher>
  SSTFILTER_ALWAYS_INLINE static void PrefetchBlock(const uint8_t* block,
                                                    Prefetcher prefetch) {
    prefetch(block);
    prefetch(block + kBlockBytes - 1);
  }
  template <typename Prefetcher>
  SSTFILTER_ALWAYS_INLINE static void Prefetch(uint64_t h, const uint8_t* data,
                                               uint64_t num_blocks,
                                               Prefetcher prefetch) {
    PrefetchBlock(Block(h, data, num_blocks), prefetch);
  }
};

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_POLICY_BLOOM_IMPL_H_
