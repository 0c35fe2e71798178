// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The keys and values of a comparison, and the lookup phases run on them.
//
// Key number i is 8 bytes, big-endian, of SplitMix64Finalizer(i + seed) --
// a bijection, so distinct numbers give distinct keys -- followed by
// key_size - 8 pad bytes '0' (as db_bench pads). Numbers [0, num_keys) are
// loaded; numbers from num_keys on are the random absent keys. The
// neighbour of present key i is key i with its last (pad) byte changed:
// absent, since every loaded key ends in '0', and as close to a present key
// as a key can be (db_bench readmissing). Values are value_size
// pseudo-random bytes of the key number.

#ifndef SSTFILTER_TOOLS_COMPARE_WORKLOAD_H_
#define SSTFILTER_TOOLS_COMPARE_WORKLOAD_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "harness/io_counters.h"
#include "harness/keys.h"

namespace sstfilter {
namespace compare {

// The harness's generator, counters and random numbers, by their names here.
using harness::IoCounters;
using harness::Random64;
using harness::SplitMix64Finalizer;
using harness::ThreadCounters;

// Every key size must leave at least one pad byte for neighbours.
inline constexpr int kMinKeySize = 9;

class KeySpace {
 public:
  // REQUIRES: key_size >= kMinKeySize, value_size >= 0.
  KeySpace(uint64_t num_keys, int key_size, int value_size, uint64_t seed)
      : num_keys_(num_keys),
        key_size_(key_size),
        value_size_(value_size),
        keys_(harness::KeySpace::Hashed(
            seed, std::string(static_cast<size_t>(key_size - 8), '0'))) {}

  uint64_t num_keys() const { return num_keys_; }
  int key_size() const { return key_size_; }
  int value_size() const { return value_size_; }

  // Key number i (present if i < num_keys()).
  void Key(uint64_t i, std::string* out) const { keys_.Key(i, out); }
  // Present key i with its last byte changed from '0' to one of the 255
  // other byte values, chosen by `salt`: never a loaded key.
  void Neighbour(uint64_t i, uint64_t salt, std::string* out) const {
    // '0' + 1 .. '0' + 255, modulo 256: every byte value except '0'.
    *out = keys_.Key(
        i, static_cast<char>(static_cast<uint8_t>('0' + 1 + salt % 255)));
  }
  void Value(uint64_t i, std::string* out) const {
    keys_.Value(i, static_cast<size_t>(value_size_), out);
  }

 private:
  const uint64_t num_keys_;
  const int key_size_;
  const int value_size_;
  const harness::KeySpace keys_;
};

// The lookup workload's phases (kAllPhases), and the memory-budget
// workload's one: Gets of present and absent keys mixed, drawn from a key
// distribution (LookupOptions: absent_share, zipf).
enum class Phase { kPresent, kAbsent, kNeighbour, kMultiGet, kMixed };
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
    case Phase::kMixed:
      return "mixed";
  }
  return "?";
}

// Ranks 0 .. n-1 drawn with P(rank r) proportional to 1 / (r + 1)^theta,
// 0 < theta < 1 (Gray et al., "Quickly generating billion-record synthetic
// databases", SIGMOD 1994; YCSB's "zipfian" with theta 0.99), mapped onto
// the key numbers by a fixed permutation, so that the hot keys are spread
// over the load order (and so over the tree's levels). Construction sums n
// powers; Next is O(1) and thread-safe (const).
class Zipf {
 public:
  // REQUIRES: n >= 2, 0 < theta < 1.
  Zipf(uint64_t n, double theta);

  uint64_t n() const { return n_; }
  double theta() const { return theta_; }
  // A key number in [0, n).
  uint64_t Next(Random64* rng) const;

 private:
  const uint64_t n_;
  const double theta_;
  double zeta_n_ = 0;
  double alpha_ = 0;
  double eta_ = 0;
  double half_pow_theta_ = 0;
  uint64_t multiplier_ = 1;  // coprime with n: rank -> key number
};

}  // namespace compare
}  // namespace sstfilter

#endif  // SSTFILTER_TOOLS_COMPARE_WORKLOAD_H_
