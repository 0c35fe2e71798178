// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Internal: the Bloom kinds' planning as other families use it, to write a
// Bloom filter in place of their own where it is smaller or more accurate
// (cuckoo, ribbon) or to size one (mutable). Implemented in
// policy/bloom/bloom.cc; the family's own interface is bloom.h.

#ifndef SSTFILTER_POLICY_BLOOM_FALLBACK_H_
#define SSTFILTER_POLICY_BLOOM_FALLBACK_H_

#include <cmath>
#include <cstdint>
#include <string>

#include "policy/hash_list.h"
#include "policy/plan.h"
#include "sstfilter/spec.h"

namespace sstfilter {
namespace internal {

// The plan of a bloom or blocked_bloom spec: blocked Bloom from
// kMinBlockedPayload bytes on, standard Bloom below. Its expected FPR is
// at most kSmallFilterFprSlack times that of the spec's filter of
// kLargeFilterKeys keys (plan.h): a blocked filter whose rounding down to
// whole blocks would miss that is rounded up, past MaxFilterBytes.
KindPlan PlanBloomFamily(const FilterSpec& spec, uint64_t n, bool with_fpr);

// ln(1/fpr) / ln(2)^2: the bits per key at which a standard Bloom filter
// with the best real-valued k reaches `fpr`. No filter of fewer bits per
// key reaches it, so searches for the smallest size start just below.
inline double StandardBloomOptimumBits(double fpr) {
  const double ln2 = std::log(2.0);
  return -std::log(fpr) / (ln2 * ln2);
}

// The spec of `kind` (bloom or blocked_bloom) for n > 0 keys, hashed as
// `spec` (seed, keyed, salt), whose standard Bloom payload is exactly
// `bytes` bytes: n b = 8 bytes - 1/2, so ceil(n b) = 8 bytes bits. As
// blocked_bloom, PlanBloomFamily rounds that up to whole 64-byte blocks
// (within MaxFilterBytes), or writes a standard Bloom filter below
// kMinBlockedPayload.
FilterSpec BloomSpecForBytes(FilterKind kind, uint64_t bytes, uint64_t n,
                             const FilterSpec& spec);

// The most accurate Bloom-family spec whose PlanBloomFamily payload for
// n > 0 keys is at most `bytes`, hashed as `spec`: blocked Bloom from
// kMinBlockedPayload bytes on (rounded down to whole 64-byte blocks),
// standard Bloom below.
FilterSpec BloomSpecWithin(uint64_t bytes, uint64_t n, const FilterSpec& spec);

// The standard Bloom spec, hashed as `spec`, whose filter for n > 0 keys
// takes the most bytes, trailer included, that are at most `total` (at
// least one payload byte): exactly `total` unless the trailer's size steps
// over it. Kinds that write a Bloom filter in place of their own give it
// their own filter's size this way, so that FilterSize stays
// non-decreasing in n.
FilterSpec BloomSpecOfTotal(uint64_t total, uint64_t n, const FilterSpec& spec);

// Appends a Bloom-family filter (kind per PlanBloomFamily) for `hashes`.
void AppendBloomFamilyFilter(const FilterSpec& spec, const HashList& hashes,
                             std::string* dst);

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_POLICY_BLOOM_FALLBACK_H_
