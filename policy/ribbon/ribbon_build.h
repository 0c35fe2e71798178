// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Internal to policy/ribbon/: what the construction of each form
// (ribbon_dense.cc, ribbon_banded.cc, ribbon_segmented.cc) shares with
// AppendRibbonFilter (ribbon.cc), which picks the form the plan names and
// falls back as docs/FORMAT.md says.

#ifndef SSTFILTER_POLICY_RIBBON_BUILD_H_
#define SSTFILTER_POLICY_RIBBON_BUILD_H_

#include <cstdint>
#include <string>

#include "policy/format.h"
#include "policy/hash_list.h"
#include "policy/ribbon/ribbon.h"
#include "policy/ribbon/ribbon_impl.h"

namespace sstfilter {
namespace internal {

// The mask of a key's fingerprint bits checked by `cols` columns.
inline uint32_t LowBits(uint32_t cols) {
  return cols >= 32 ? ~uint32_t{0} : (uint32_t{1} << cols) - 1;
}

// Sorts list[lo, hi) in place by key(h), which is in [0, keys): a
// counting sort that moves each hash along its cycle to its key's next
// place, with two words per key (s->next, s->end) and no copy.
template <typename Key>
inline void SortRangeInPlace(HashList& list, uint64_t lo, uint64_t hi,
                             uint64_t keys, const Key& key, RibbonScratch* s) {
  s->next.assign(keys + 1, 0);
  for (uint64_t i = lo; i < hi; i++) s->next[key(list[i]) + 1]++;
  s->next[0] = lo;
  for (uint64_t b = 1; b <= keys; b++) s->next[b] += s->next[b - 1];
  s->end.assign(s->next.begin() + 1, s->next.end());
  for (uint64_t b = 0; b < keys; b++) {
    while (s->next[b] < s->end[b]) {
      uint64_t h = list[s->next[b]];
      for (uint64_t d = key(h); d != b; d = key(h)) {
        std::swap(h, list[s->next[d]++]);
      }
      list[s->next[b]++] = h;
    }
  }
}

// The full trailer of a dense (a = m, b = r) or banded (a = blocks) filter
// of `payload` bytes under `salt` (ribbon.cc).
Trailer RibbonTrailer(const FilterSpec& spec, uint64_t payload, bool dense,
                      uint32_t salt, uint64_t a, uint64_t b);

// Appends the dense filter `rp` plans, trying up to `salts` salts in
// order. False, dst unchanged, if no system was solvable.
bool AppendDense(const FilterSpec& spec, const RibbonPlan& rp,
                 const HashList& hashes, int salts, RibbonBuildStats* stats,
                 std::string* dst);
// Appends the banded filter `rp` plans, trying salts_per_size salts at
// each size, then ~3% more blocks (the same words: fewer columns) up to
// `growths` times. False, dst unchanged, if no system was solvable.
bool AppendBanded(const FilterSpec& spec, const RibbonPlan& rp,
                  HashList* hashes, const RibbonBuildOptions& options,
                  RibbonScratch* scratch, RibbonBuildStats* stats,
                  std::string* dst);
// Appends the segmented filter `rp` plans: hashes sorted by segment, each
// segment sized to its keys and solved on its own (its first salt that
// solves it), in scratch memory of one segment. False (dst as it was) if a
// segment has no solution within `salts` or the blocks do not fit.
bool AppendSegmented(const FilterSpec& spec, const RibbonPlan& rp, int salts,
                     HashList* hashes, std::string* dst,
                     RibbonBuildStats* stats, RibbonScratch* s);

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_POLICY_RIBBON_BUILD_H_
