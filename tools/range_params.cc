// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// `sstfilter params --kind=range`: the range kind's bits per key for a
// target FPR of empty ranges, for range lengths 1 to 4096 images, from the
// bound the builder guarantees (RangeFprBound) and the bytes it writes
// (RangeFilterSize).

#include <cmath>
#include <cstdio>
#include <string>

#include "sstfilter/range.h"
#include "tools/commands.h"

namespace sstfilter {
namespace tool {

int RangeParams(uint64_t keys, double fpr) {
  std::printf(
      "range kind: %llu distinct key images, target FPR %.6g%% for empty "
      "ranges of L images\n",
      static_cast<unsigned long long>(keys), 100 * fpr);
  std::printf("%6s %-22s %9s %14s %13s %14s\n", "L", "spec", "bits/key",
              "bytes", "", "FPR bound");
  for (uint64_t len : {1, 16, 256, 4096}) {
    RangeFilterSpec spec;
    // B = 2 + log2(L / fpr), rounded up to 1/100 so the bound stays within
    // the target.
    spec.bits_per_key =
        std::ceil((2 + std::log2(len / fpr)) * 100 - 1e-9) / 100;
    spec.bits_per_key = std::max(spec.bits_per_key, RangeFilterSpec::kMinBits);
    if (spec.bits_per_key > RangeFilterSpec::kMaxBits) {
      std::printf("%6llu needs more than %g bits per key\n",
                  static_cast<unsigned long long>(len),
                  RangeFilterSpec::kMaxBits);
      continue;
    }
    spec.max_range = std::max<uint64_t>(len, spec.max_range);
    const size_t bytes = RangeFilterSize(spec, keys);
    if (bytes == 0) {
      std::printf("%6llu more than 2^32 - 1 images in one filter\n",
                  static_cast<unsigned long long>(len));
      continue;
    }
    std::printf("%6llu %-22s %9.3f %14zu %13s %13.6g%%\n",
                static_cast<unsigned long long>(len), spec.ToString().c_str(),
                8.0 * static_cast<double>(bytes) / static_cast<double>(keys),
                bytes, "", 100 * RangeFprBound(spec.bits_per_key, len));
  }
  std::printf(
      "bits/key counts every byte written, trailer included. The bound "
      "holds for\nevery key set and every range of up to 15 * max_range + 1 "
      "images (each spec's\nmax_range is at least its L; docs/FORMAT.md, "
      "kind 7); one filter per table.\n");
  return 0;
}

}  // namespace tool
}  // namespace sstfilter
