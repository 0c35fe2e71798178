// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The keys and values of a comparison, and the lookup phases run on them.
//
// Key number i is 8 bytes, big-endian, of Mix64(i + seed) -- a bijection,
// so distinct numbers give distinct keys -- followed by key_size - 8 pad
// bytes '0' (as db_bench pads). Numbers [0, num_keys) are loaded; numbers
// from num_keys on are the random absent keys. The neighbour of present key
// i is key i with its last (pad) byte changed: absent, since every loaded
// key ends in '0', and as close to a present key as a key can be (db_bench
// readmissing). Values are value_size pseudo-random bytes of the key number.

#ifndef SSTFILTER_TOOLS_COMPARE_WORKLOAD_H_
#define SSTFILTER_TOOLS_COMPARE_WORKLOAD_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace sstfilter {
namespace compare {

// SplitMix64's finalizer: a bijection of 64-bit integers that mixes well.
inline uint64_t Mix64(uint64_t x) {
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
    return Mix64(state_);
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

// Every key size must leave at least one pad byte for neighbours.
inline constexpr int kMinKeySize = 9;

class KeySpace {
 public:
  // REQUIRES: key_size >= kMinKeySize, value_size >= 0.
  KeySpace(uint64_t num_keys, int key_size, int value_size, uint64_t seed)
      : num_keys_(num_keys),
        key_size_(key_size),
        value_size_(value_size),
        offset_(Mix64(seed ^ 0x5eed5eed5eed5eedULL)) {}

  uint64_t num_keys() const { return num_keys_; }
  int key_size() const { return key_size_; }
  int value_size() const { return value_size_; }

  // Key number i (present if i < num_keys()).
  void Key(uint64_t i, std::string* out) const {
    out->assign(static_cast<size_t>(key_size_), '0');
    const uint64_t v = Mix64(i + offset_);
    for (int b = 0; b < 8; b++) {
      (*out)[b] = static_cast<char>(v >> (56 - 8 * b));
    }
  }
  // Present key i with its last byte changed from '0' to one of the 255
  // other byte values, chosen by `salt`: never a loaded key.
  void Neighbour(uint64_t i, uint64_t salt, std::string* out) const {
    Key(i, out);
    // '0' + 1 .. '0' + 255, modulo 256: every byte value except '0'.
    const uint8_t last = static_cast<uint8_t>('0' + 1 + salt % 255);
    out->back() = static_cast<char>(last);
  }
  void Value(uint64_t i, std::string* out) const {
    out->resize(static_cast<size_t>(value_size_));
    Random64 r(Mix64(i + offset_) ^ 0x76616c7565ULL);
    for (int b = 0; b < value_size_; b += 8) {
      uint64_t w = r.Next();
      for (int j = b; j < value_size_ && j < b + 8; j++, w >>= 8) {
        (*out)[j] = static_cast<char>(w);
      }
    }
  }

 private:
  const uint64_t num_keys_;
  const int key_size_;
  const int value_size_;
  const uint64_t offset_;
};

enum class Phase { kPresent, kAbsent, kNeighbour, kMultiGet };
inline constexpr Phase kAllPhases[] = {Phase::kPresent, Phase::kAbsent,
                                       Phase::kNeighbour, Phase::kMultiGet};

inline const char* PhaseName(Phase p) {
  switch (p) {
    case Phase::kPresent:
      return "present";
    case Phase::kAbsent:
      return "absent";
    case Phase::kNeighbour:
      return "neighbour";
    case Phase::kMultiGet:
      return "multiget";
  }
  return "?";
}

}  // namespace compare
}  // namespace sstfilter

#endif  // SSTFILTER_TOOLS_COMPARE_WORKLOAD_H_
