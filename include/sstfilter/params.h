// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Parameter math: how large a filter must be for a target false-positive
// rate (FPR), and what FPR a given size gives. These are the formulas the
// builders themselves use, so a prediction matches what is built.
//
//   sstfilter::FilterParams p;
//   sstfilter::Status s = sstfilter::ParamsForFpr(
//       sstfilter::FilterKind::kBloom, 1000000, 0.01, &p);
//   // p.bits_per_key ~ 9.6, p.num_probes == 7, p.expected_fpr <= 0.01

#ifndef SSTFILTER_PARAMS_H_
#define SSTFILTER_PARAMS_H_

#include <cstdint>

#include "sstfilter/spec.h"
#include "sstfilter/status.h"

namespace sstfilter {

// Standard Bloom: (1 - e^(-k/b))^k for b bits per key and k probes.
double StandardBloomFpr(double bits_per_key, int num_probes);
// The k that minimises StandardBloomFpr: round(b ln 2), within [1, 30].
int StandardBloomProbes(double bits_per_key);

// Cache-line-blocked Bloom with 512-bit blocks: the standard formula
// averaged over the Poisson-distributed number of keys per block,
// sum_j P(j; 512/b) (1 - (1 - 1/512)^(j k))^k.
double BlockedBloomFpr(double bits_per_key, int num_probes);
// The k that minimises BlockedBloomFpr, within [1, 16].
int BlockedBloomProbes(double bits_per_key);

// Cuckoo filter with buckets of 4 slots holding f-bit fingerprints, never 0,
// at load factor `load` (keys / slots): a negative query compares its
// fingerprint with the 8 * load occupied slots of its two buckets on
// average, each equal by chance with probability 1 / (2^f - 1), so
// 1 - (1 - 1/(2^f - 1))^(8 load) ~ 8 load / 2^f.
double CuckooFpr(int fingerprint_bits, double load);
// The fingerprint bits f of a "cuckoo:<bits_per_key>" filter:
// round(bits_per_key), within [4, 32]. Builders fill 95% of the slots, so
// such a filter spends f / 0.95 bits per key: cuckoo:12 spends 12.63 bits
// per key for an FPR of 0.19%.
int CuckooFingerprintBits(double bits_per_key);

// Everything about one filter's size and accuracy.
struct FilterParams {
  FilterKind kind = FilterKind::kEmpty;
  uint64_t num_keys = 0;
  double bits_per_key = 0;    // as requested/chosen (before rounding to bytes)
  int num_probes = 0;         // Bloom kinds
  int fingerprint_bits = 0;   // cuckoo kinds
  uint64_t filter_bytes = 0;  // what a builder writes for num_keys keys
  double expected_fpr = 0;
};

// The parameters a builder for `spec` uses for `num_keys` distinct keys.
// More keys than one filter can hold (2^52) are an InvalidArgument error.
Status ParamsForSpec(const FilterSpec& spec, uint64_t num_keys,
                     FilterParams* out);

// The smallest filter of `kind` whose expected FPR is <= target_fpr for
// `num_keys` keys. REQUIRES 0 < target_fpr < 1; an FPR the kind cannot reach
// within its bits-per-key range is an InvalidArgument error.
Status ParamsForFpr(FilterKind kind, uint64_t num_keys, double target_fpr,
                    FilterParams* out);

}  // namespace sstfilter

#endif  // SSTFILTER_PARAMS_H_
