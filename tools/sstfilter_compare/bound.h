// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The information bound on a tree's absent-key reads (docs/COMPARE.md):
// the fewest reads per absent Get that any filters of the tree's memory
// can give.
//
// An absent Get probes one filter per sorted run: each L0 table by itself,
// and each non-empty level L1+ as one run (leveled compaction; under
// universal compaction each level also holds one run). With b_i bits per
// key on run i, which holds the share p_i of the keys, and sum p_i b_i = b
// bits per key over the tree, the expected false positives of an absent
// Get, sum 2^-b_i, are least (Lagrange) where 2^-b_i is proportional to
// p_i: 2^-b_i = p_i 2^-(b - H), summing to
//
//   bound = 2^-(b - H),  H = -sum p_i log2 p_i  (the entropy of the shares),
//
// and no filter of b_i bits per key has an FPR below 2^-b_i. (Runs whose
// optimal b_i would be negative only raise the true least.) A run at 1.0x
// the bound is at the limit; by_level aims at it.

#ifndef SSTFILTER_TOOLS_COMPARE_BOUND_H_
#define SSTFILTER_TOOLS_COMPARE_BOUND_H_

#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

#include "tools/sstfilter_compare/policies.h"

namespace sstfilter {
namespace compare {

// The keys of each sorted run of a tree of `tables`.
inline std::vector<uint64_t> SortedRunKeys(
    const std::vector<FilterTable>& tables) {
  std::vector<uint64_t> runs;
  std::map<int, uint64_t> levels;  // L1+
  for (const FilterTable& t : tables) {
    if (t.level == 0) {
      runs.push_back(t.keys);
    } else {
      levels[t.level] += t.keys;
    }
  }
  for (const auto& [level, keys] : levels) runs.push_back(keys);
  return runs;
}

// H of the runs' key shares in bits, or -1 if they hold no keys.
inline double RunEntropy(const std::vector<uint64_t>& run_keys) {
  double all = 0;
  for (uint64_t k : run_keys) all += static_cast<double>(k);
  if (all <= 0) return -1;
  double h = 0;
  for (uint64_t k : run_keys) {
    const double p = static_cast<double>(k) / all;
    if (p > 0) h -= p * std::log2(p);
  }
  return h;
}

// Reads per absent Get at `bits_per_key` over a tree of entropy `h`:
// 2^-(b - H).
inline double AbsentReadsBound(double bits_per_key, double h) {
  return std::exp2(h - bits_per_key);
}

}  // namespace compare
}  // namespace sstfilter

#endif  // SSTFILTER_TOOLS_COMPARE_BOUND_H_
