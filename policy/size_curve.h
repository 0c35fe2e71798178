// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Internal: a kind's filter sizes as a convex FPR-vs-bits curve, the
// ground of every plan over runs (PlanLevelBits, params.cc; the auto
// planner, cost_plan.cc).

#ifndef SSTFILTER_POLICY_SIZE_CURVE_H_
#define SSTFILTER_POLICY_SIZE_CURVE_H_

#include <cstdint>
#include <vector>

#include "sstfilter/spec.h"

namespace sstfilter {
namespace internal {

// One size of a kind's filter: the spec's bits per key, the bits per key a
// builder spends on it, and its expected FPR.
struct SizePoint {
  double spec_bits;
  double real_bits;
  double fpr;
};

// Keys of the filters SizeCurve describes: large enough that rounding to
// bytes or blocks and the trailer vanish.
inline constexpr uint64_t kCurveKeys = uint64_t{1} << 20;
inline constexpr double kCurveStep = 1.0 / 16;

// The lower convex hull of (real_bits, fpr) over the kind's sizes for
// kCurveKeys keys, in steps of kCurveStep spec bits from MinBitsPerKey to
// MaxBitsPerKey, by real_bits. On a convex curve, giving bits to the run
// with the best FP saved per bit, segment by segment, is optimal; the hull
// also skips sizes no better than a mix of their neighbours (cuckoo's
// whole fingerprint bits, Bloom's whole probes). Thread-safe; computed
// once per kind. REQUIRES: a kind some spec names.
const std::vector<SizePoint>& SizeCurve(FilterKind kind);

// The lower convex hull of `points` (any order) by real_bits, dropping
// points that gain no FPR over a smaller one; of points of equal
// real_bits and fpr, the one nearest a whole number of spec bits stays.
std::vector<SizePoint> LowerHull(std::vector<SizePoint> points);

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_POLICY_SIZE_CURVE_H_
