// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Hot code of the counting Bloom filter (kind 4): a standard Bloom filter
// (bloom_impl.h) whose m bits are 4-bit counters. A key's k probes are the
// standard Bloom's (StandardProbes), over m counters instead of m bits.
//
// Counter c is the low nibble of payload byte c / 2 if c is even, the high
// nibble if odd. A key may match iff all its k counters are non-zero.
// Insert adds 1 to each (a probe repeated within a key adds twice); Erase
// subtracts 1. A counter that reaches 15 saturates: it is never changed
// again, since it no longer knows how many keys it counts. Hence no erase
// can make an inserted key's counter reach 0: no false negatives.

#ifndef SSTFILTER_POLICY_COUNTING_BLOOM_IMPL_H_
#define SSTFILTER_POLICY_COUNTING_BLOOM_IMPL_H_

#include <cstddef>
#include <cstdint>

#include "policy/bloom/bloom_impl.h"

namespace sstfilter {
namespace internal {

struct CountingBloomImpl {
  static constexpr unsigned kSaturated = 15;

  static unsigned Get(const uint8_t* data, uint64_t c) {
    return (data[c >> 1] >> ((c & 1) * 4)) & 15u;
  }
  static void Put(uint8_t* data, uint64_t c, unsigned v) {
    const unsigned shift = (c & 1) * 4;
    data[c >> 1] =
        static_cast<uint8_t>((data[c >> 1] & ~(15u << shift)) | (v << shift));
  }

  static bool MayMatch(uint64_t h, const uint8_t* data, uint64_t num_counters,
                       int num_probes) {
    StandardProbes probes(h, num_counters);
    for (int i = 0; i < num_probes; i++) {
      if (Get(data, probes.Next()) == 0) return false;
    }
    return true;
  }
  // Prefetches the bytes of the first `num_probes` counters (queries: two).
  template <typename Prefetcher>
  SSTFILTER_ALWAYS_INLINE static void Prefetch(uint64_t h, const uint8_t* data,
                                               uint64_t num_counters,
                                               int num_probes,
                                               Prefetcher prefetch) {
    StandardBloomImpl::PrefetchCells<4>(h, data, num_counters, num_probes,
                                        prefetch);
  }
  // Adds 1 to every probed counter below 15.
  static void Insert(uint64_t h, uint8_t* data, uint64_t num_counters,
                     int num_probes) {
    StandardProbes probes(h, num_counters);
    for (int i = 0; i < num_probes; i++) {
      const uint64_t c = probes.Next();
      const unsigned v = Get(data, c);
      if (v < kSaturated) Put(data, c, v + 1);
    }
  }
  // Subtracts 1 from every probed counter that is neither 0 nor saturated,
  // if none is 0; otherwise the key is certainly absent: returns false and
  // changes nothing.
  static bool Erase(uint64_t h, uint8_t* data, uint64_t num_counters,
                    int num_probes) {
    if (!MayMatch(h, data, num_counters, num_probes)) return false;
    StandardProbes probes(h, num_counters);
    for (int i = 0; i < num_probes; i++) {
      const uint64_t c = probes.Next();
      const unsigned v = Get(data, c);
      if (v != 0 && v < kSaturated) Put(data, c, v - 1);
    }
    return true;
  }
};

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_POLICY_COUNTING_BLOOM_IMPL_H_
