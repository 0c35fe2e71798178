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
#include <vector>

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
// The k that minimises BlockedBloomFpr, within [1, 16] (the smallest on a
// tie); cheap over [1, 64], where it reads a table of the steps.
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

// ---- Bits per level of an LSM tree (docs/LEVEL_SIZING.md) -----------------
//
// An absent-key lookup in an LSM tree consults one filter per sorted run:
// one per L0 file, then one per level. Its expected number of false
// positives (wasted data-block reads) is the sum of those filters' FPRs.
// For a given memory that sum is smallest when each run's FPR is
// proportional to its number of keys (Dayan et al., "Monkey", SIGMOD 2017),
// so the small upper levels get more bits per key and the last level a
// little less than the average.
//
//   sstfilter::LevelPlan plan;
//   sstfilter::PlanLevelBits(sstfilter::FilterKind::kBlockedBloom,
//                            {1000000, 10000000, 100000000}, 10, &plan);
//   // plan.bits_per_key ~ {20.6, 14.7, 9.4} (memory as 10 bits/key for all);
//   // plan.expected_false_positives ~ 1/2 of plan.uniform_false_positives.

struct LevelPlan {
  // Per run, in the order given: the bits per key of its filter in the unit
  // of the kind's spec (what "kind:<bits>" names; 0 for a run of no keys)
  // and the filter's expected FPR (0 for no keys).
  std::vector<double> bits_per_key;
  std::vector<double> fpr;
  // Sum of fpr: expected filter false positives per absent-key lookup.
  double expected_false_positives = 0;
  // The same with every run at the average bits per key.
  double uniform_false_positives = 0;
  // Bits of all filters as builders write them, and of the uniform filters
  // (the budget): equal within rounding to bytes and blocks for Bloom
  // kinds; cuckoo fingerprints are whole bits, so one run may round down.
  double total_bits = 0;
  double budget_bits = 0;
};

// The bits per key of each run's filter that minimise the expected false
// positives of an absent-key lookup probing every run once, for the memory
// the spec "<kind>:<avg_bits_per_key>" spends on all the keys. run_keys[i]
// is the number of keys of run i (each L0 file its own run). Solved on the
// kind's own FPR-vs-size formula (the one PlanFilter uses), made convex,
// in steps of 1/16 bit per key, with every run within the kind's
// [MinBitsPerKey, MaxBitsPerKey]. For a budget in total bits, pass
// total_bits / (sum of run_keys).
Status PlanLevelBits(FilterKind kind, const std::vector<uint64_t>& run_keys,
                     double avg_bits_per_key, LevelPlan* out);

}  // namespace sstfilter

#endif  // SSTFILTER_PARAMS_H_
