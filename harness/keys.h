// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The one key generator of the tests, the benchmarks and the compare tool.
// A KeySpace maps a key number i to a key: a prefix, then i as decimal
// digits (keys in the order of their numbers) or as 8 big-endian bytes of a
// 64-bit mix of i (keys in random order, as db_bench makes them), then a
// tail. Changing the last byte of a key gives its neighbour: a key that is
// absent, yet as close to a present key as a key can be.
//
//   const KeySpace& k = FixedKeys();      // "key-00000000012a" for i = 12
//   k.Key(12, 'b')                        // "key-00000000012b"
//   KeySpace::Hashed(301, "00000000")     // 16-byte keys of seed 301
//
// Tests pin FPR ceilings and filter bytes to these exact keys: a change of
// any format here changes their figures.

#ifndef SSTFILTER_HARNESS_KEYS_H_
#define SSTFILTER_HARNESS_KEYS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sstfilter {
namespace harness {

// SplitMix64's finalizer: a bijection of 64-bit integers that mixes well.
// (Not policy/primitives.h's internal::Mix64, the MurmurHash3 finalizer
// that filters use.)
inline uint64_t SplitMix64Finalizer(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// A small, fast, seedable generator (SplitMix64) for choosing keys.
class Random64 {
 public:
  explicit Random64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    return SplitMix64Finalizer(state_);
  }
  // Uniform in [0, n) by multiply-shift. REQUIRES: n > 0.
  uint64_t Uniform(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >>
                                 64);
  }
  // True with probability p.
  bool Bernoulli(double p) {
    return static_cast<double>(Next() >> 11) * 0x1.0p-53 < p;
  }

 private:
  uint64_t state_;
};

class KeySpace {
 public:
  // Key i is prefix + i in `digits` zero-padded decimal digits (more if i
  // needs them) + tail.
  static KeySpace Decimal(std::string prefix, int digits, std::string tail);
  // Key i is the 8 big-endian bytes of SplitMix64Finalizer(i + an offset
  // chosen by `seed`) + tail: a bijection, so distinct numbers give distinct
  // keys.
  static KeySpace Hashed(uint64_t seed, std::string tail);

  void Key(uint64_t i, std::string* out) const;
  std::string Key(uint64_t i) const;
  // Key i with its last byte replaced by `last`. REQUIRES: a non-empty tail.
  std::string Key(uint64_t i, char last) const;
  // Pseudo-random bytes that depend on key i only: its value.
  void Value(uint64_t i, size_t size, std::string* out) const;

  size_t tail_size() const { return tail_.size(); }

 private:
  KeySpace(std::string prefix, int digits, uint64_t offset, std::string tail)
      : prefix_(std::move(prefix)),
        digits_(digits),
        offset_(offset),
        tail_(std::move(tail)) {}
  // The number key i is made of: i (decimal) or
  // SplitMix64Finalizer(i + offset_).
  uint64_t Number(uint64_t i) const;

  std::string prefix_;
  int digits_;       // 0: hashed
  uint64_t offset_;  // hashed only
  std::string tail_;
};

// The fixed keys of the tests and the LevelDB benchmark: 16 bytes,
// "key-" + 11 decimal digits + 'a'.
const KeySpace& FixedKeys();

// Key i of another prefix, "nokey-<i>": absent from FixedKeys, and far from
// every FixedKeys key for any reasonable hash.
std::string OtherPrefixKey(uint64_t i);

// Absent keys j = 0, 1, ... for a database of FixedKeys 0 .. num_keys-1.
// Both sort inside the database's key range, right after a stored key, so
// a Get consults that key's table and filter.
// "Far": another length and tail than any stored key ("key-00000012345a/17"),
// unrelated to it for any reasonable hash: the random-key case.
std::string FarAbsentKey(uint64_t j, uint64_t num_keys);
// "Neighbour": a stored key with its last byte changed, 'a' to 'b'.
std::string NeighbourAbsentKey(uint64_t j, uint64_t num_keys);
// A stored key with its last byte 'a' replaced by each of the 255 other
// byte values in turn (j % 255). LevelDB's Bloom hash is weak here for some
// values: at 16-byte keys, 36 keys per filter and 10 bits/key it gives ~2%
// false positives for 'b' but ~13% for 'q' (a difference of 16).
std::string AnyByteNeighbourKey(uint64_t j, uint64_t num_keys);

// Keys base .. base+n-1 of a key space in one flat buffer, as views: no
// per-key allocation, so a query costs what an engine's would.
// REQUIRES: all keys of the range have the same length.
class KeySet {
 public:
  KeySet(const KeySpace& space, uint64_t base, uint64_t n);
  KeySet(const KeySet&) = delete;
  KeySet& operator=(const KeySet&) = delete;

  size_t size() const { return views_.size(); }
  std::string_view operator[](size_t i) const { return views_[i]; }
  const std::string_view* data() const { return views_.data(); }

 private:
  std::string buf_;
  std::vector<std::string_view> views_;
};

}  // namespace harness
}  // namespace sstfilter

#endif  // SSTFILTER_HARNESS_KEYS_H_
