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

// ---- Kinds and bits per run by cost: auto (docs/LEVEL_SIZING.md) ---------
//
// An absent-key Get probes one filter per run; each probe costs the kind's
// query time, and each false positive one wasted data-block read. An auto
// spec chooses, per run, the kind among blocked_bloom, bloom and ribbon and
// the bits per key that minimise
//
//   sum_i  query_ns(K_i) + 1000 * read_us * FPR_{K_i}(b_i, n_i)
//
// (nanoseconds per absent Get) for the filter memory the spec's average
// bits per key spends on all the keys, with the build time
// sum_i rebuilds_i * n_i * build_ns(K_i) at most build_x times that of
// blocked Bloom filters everywhere. FPR_K(b, n) is the FPR of a filter of
// kind K built at b bits per key for n keys (ParamsForSpec's), so a small
// run is planned on what its small filter really gives (runs under 65,536
// keys: at n within 1/8 of an octave; sizes at exactly n below 4,096).
// Kinds are discrete: the plan is optimal up to one run's choice between
// two kinds.
//
//   sstfilter::FilterSpec spec;
//   sstfilter::ParseFilterSpec("auto:10", &spec);
//   // One L0 file, then levels of 10^6 and 10^7 keys.
//   std::vector<uint64_t> runs = {100000, 1000000, 10000000};
//   sstfilter::CostPlan plan;
//   sstfilter::PlanFilterCosts(spec, runs,
//                              sstfilter::TreeRebuilds(runs, 1), &plan);
//   // plan.kinds[i], plan.bits_per_key[i]: the spec of run i's filter.

// What one probe and one key built cost for a kind, in nanoseconds.
struct KindCost {
  FilterKind kind = FilterKind::kEmpty;
  double query_ns = 0;  // one absent-key probe of a filter of 10^6 keys
  double build_ns = 0;  // per key added and built, 10^6 keys
};

// The kinds an auto spec chooses from, with their measured costs
// (docs/LEVEL_SIZING.md): blocked_bloom, bloom, ribbon.
const std::vector<KindCost>& DefaultKindCosts();

struct CostPlan {
  // Per run, in the order given (for a run of no keys: kEmpty and zeros):
  std::vector<FilterKind> kinds;     // the kind of its filters
  std::vector<double> bits_per_key;  // in the unit of the kind's spec
  std::vector<double> fpr;           // expected FPR (wasted reads/Get)
  std::vector<double> query_ns;      // per probe
  std::vector<double> build_ns;      // per key built
  // Sums over the runs, per absent-key Get: false positives (wasted
  // reads), filter query time, and the whole cost in nanoseconds.
  double expected_false_positives = 0;
  double expected_query_ns = 0;
  double expected_cost_ns = 0;
  // Build time, sum_i rebuilds_i * n_i * build_ns_i, and the same with
  // blocked Bloom for every run (the budget is build_x times it).
  double build_ns_total = 0;
  double blocked_bloom_build_ns = 0;
  // Bits of all filters as builders write them for the runs' keys, and
  // the budget: the spec's average bits per key times the keys. Equal
  // within rounding to bytes and blocks, and the trailers of small runs.
  double total_bits = 0;
  double budget_bits = 0;
};

// The rebuild weight of each run (how many times, per key it holds now,
// its keys were built into filters at its place in the tree) for a leveled
// LSM tree whose first `l0_runs` runs are L0 files and the rest the levels
// from the top down: every key of the tree was flushed once, so an L0 file
// weighs (all keys) / (all L0 keys); level L holds keys that all passed
// through it, each rewritten there 1 + n_L / (2 n_above) times (n_above:
// the keys of the level above, or of L0 for the first level), so it weighs
// (keys of L and below) / n_L * (1 + n_L / (2 n_above)), the ratio capped
// at 500, and 5 (a ratio of 10) for a first level below no L0 file. A run
// of no keys weighs 0.
std::vector<double> TreeRebuilds(const std::vector<uint64_t>& run_keys,
                                 size_t l0_runs);

// The plan of an auto spec over runs of run_keys[i] keys with rebuild
// weights rebuilds[i] (as many as runs; TreeRebuilds gives them), with
// `costs` for the kinds (DefaultKindCosts() if empty; the kinds it lists
// are the candidates). InvalidArgument if the spec is not a valid auto
// spec, there are no runs, or the sizes differ.
Status PlanFilterCosts(const FilterSpec& spec,
                       const std::vector<uint64_t>& run_keys,
                       const std::vector<double>& rebuilds, CostPlan* out,
                       const std::vector<KindCost>& costs = {});

// The spec an auto spec writes for one filter of `num_keys` keys when no
// tree is known: the candidate kind (within build_x of blocked Bloom's
// build time per key) whose query_ns + 1000 * read_us * FPR is least at
// the spec's bits per key; seed, keyed and salt kept. REQUIRES:
// spec.auto_kind and spec.Validate().ok().
FilterSpec ChooseKindForKeys(const FilterSpec& spec, uint64_t num_keys);

}  // namespace sstfilter

#endif  // SSTFILTER_PARAMS_H_
