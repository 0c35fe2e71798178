// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include "sstfilter/params.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "policy/plan.h"
#include "policy/size_curve.h"
#include "policy/spec_parse.h"

namespace sstfilter {

namespace {
Status TooManyKeys(uint64_t num_keys) {
  return Status::InvalidArgument(std::to_string(num_keys) +
                                 " keys are more than one filter can hold (" +
                                 std::to_string(internal::kMaxPlanKeys) + ")");
}
}  // namespace

Status ParamsForSpec(const FilterSpec& spec, uint64_t num_keys,
                     FilterParams* out) {
  Status s = spec.Validate();
  if (!s.ok()) return s;
  if (num_keys > internal::kMaxPlanKeys) return TooManyKeys(num_keys);
  *out = internal::PlanFilter(spec, num_keys);
  return Status::OK();
}

Status ParamsForFpr(FilterKind kind, uint64_t num_keys, double target_fpr,
                    FilterParams* out) {
  if (!(target_fpr > 0 && target_fpr < 1)) {
    return Status::InvalidArgument("target FPR must be within (0, 1), got " +
                                   internal::FormatNumber(target_fpr));
  }
  if (num_keys > internal::kMaxPlanKeys) return TooManyKeys(num_keys);
  FilterSpec spec;
  spec.kind = kind;
  spec.bits_per_key = MaxBitsPerKey(kind);
  Status s = spec.Validate();
  if (!s.ok()) return s;
  // Expected FPR is non-increasing in bits per key: bisect on it, in steps
  // of 1/64 bit, for the smallest spec that reaches the target.
  const uint64_t n = std::max<uint64_t>(num_keys, 1);
  auto fpr_at = [&](double bits) {
    FilterSpec t = spec;
    t.bits_per_key = bits;
    return internal::PlanFilter(t, n).expected_fpr;
  };
  double lo = MinBitsPerKey(kind), hi = MaxBitsPerKey(kind);
  if (fpr_at(hi) > target_fpr) {
    return Status::InvalidArgument(
        std::string(FilterKindName(kind)) + " cannot reach FPR " +
        internal::FormatNumber(target_fpr) + " within " +
        internal::FormatNumber(hi) + " bits per key");
  }
  if (fpr_at(lo) <= target_fpr) hi = lo;
  while (hi - lo > 1.0 / 64) {
    const double mid = (lo + hi) / 2;
    if (fpr_at(mid) <= target_fpr) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  spec.bits_per_key = hi;
  *out = internal::PlanFilter(spec, num_keys);
  return Status::OK();
}

namespace internal {

std::vector<SizePoint> LowerHull(std::vector<SizePoint> points) {
  // Of sizes that build the same filter, keep the one nearest a whole
  // number of spec bits ("cuckoo:12", not "cuckoo:11.5").
  auto before = [](const SizePoint& a, const SizePoint& b) {
    if (a.real_bits != b.real_bits) return a.real_bits < b.real_bits;
    if (a.fpr != b.fpr) return a.fpr < b.fpr;
    return std::abs(a.spec_bits - std::round(a.spec_bits)) <
           std::abs(b.spec_bits - std::round(b.spec_bits));
  };
  // Only the first point of each size in that order can join the hull.
  // Curves mostly arrive with their sizes in order (spec bits ascending):
  // then each size's first point is its best, found in one pass, the
  // earliest of equals as a stable sort would put it.
  const bool sizes_in_order = std::is_sorted(
      points.begin(), points.end(), [](const SizePoint& a, const SizePoint& b) {
        return a.real_bits < b.real_bits;
      });
  if (sizes_in_order) {
    size_t kept = 0;
    for (size_t i = 0; i < points.size();) {
      size_t best = i, j = i + 1;
      for (; j < points.size() && points[j].real_bits == points[i].real_bits;
           j++) {
        if (before(points[j], points[best])) best = j;
      }
      points[kept++] = points[best];
      i = j;
    }
    points.resize(kept);
  } else {
    std::stable_sort(points.begin(), points.end(), before);
  }
  std::vector<SizePoint> hull;
  for (const SizePoint& p : points) {
    if (!hull.empty() && p.real_bits == hull.back().real_bits) continue;
    if (!hull.empty() && p.fpr >= hull.back().fpr) continue;  // no gain
    // Pop points above the segment from their predecessor to p.
    while (hull.size() >= 2) {
      const SizePoint& a = hull[hull.size() - 2];
      const SizePoint& b = hull.back();
      const double cross = (b.real_bits - a.real_bits) * (p.fpr - a.fpr) -
                           (b.fpr - a.fpr) * (p.real_bits - a.real_bits);
      if (cross > 0) break;  // b is below the segment a-p: keep it
      hull.pop_back();
    }
    hull.push_back(p);
  }
  return hull;
}

// Computed once per kind (blocked Bloom's FPR sums a Poisson series).
const std::vector<SizePoint>& SizeCurve(FilterKind kind) {
  static std::mutex mu;
  static auto* curves = new std::map<FilterKind, std::vector<SizePoint>>();
  std::lock_guard<std::mutex> lock(mu);
  std::vector<SizePoint>& hull = (*curves)[kind];
  if (!hull.empty()) return hull;
  std::vector<SizePoint> points;
  const double lo = MinBitsPerKey(kind), hi = MaxBitsPerKey(kind);
  for (double b = lo; b <= hi + 1e-9; b += kCurveStep) {
    FilterSpec spec;
    spec.kind = kind;
    spec.bits_per_key = std::min(b, hi);
    const FilterParams p = internal::PlanFilter(spec, kCurveKeys);
    points.push_back({spec.bits_per_key,
                      8.0 * static_cast<double>(p.filter_bytes) / kCurveKeys,
                      p.expected_fpr});
  }
  hull = LowerHull(std::move(points));
  return hull;
}

}  // namespace internal

namespace {

using internal::kCurveKeys;
using internal::SizeCurve;
using internal::SizePoint;

// The spec bits per key of each run: every run starts at the curve's
// smallest size; the budget left, in bits, goes to whichever run saves the
// most false positives per bit at its next hull segment: segment slope /
// run keys. The run the budget runs out on gets a fraction of its segment.
std::vector<double> SpendBudget(const FilterSpec& avg,
                                const std::vector<uint64_t>& run_keys,
                                const std::vector<SizePoint>& curve) {
  const size_t n = run_keys.size();
  double total_keys = 0;
  for (uint64_t k : run_keys) total_keys += static_cast<double>(k);
  std::vector<size_t> at(n, 0);
  std::vector<double> spec_bits(n, curve[0].spec_bits);
  FilterParams uniform = internal::PlanFilter(avg, kCurveKeys);
  double left =
      total_keys * 8.0 * static_cast<double>(uniform.filter_bytes) / kCurveKeys;
  using Step = std::pair<double, size_t>;  // (FP saved per bit, run)
  std::priority_queue<Step> steps;
  auto push = [&](size_t i) {
    const size_t h = at[i];
    if (h + 1 >= curve.size()) return;
    const double per_key = (curve[h].fpr - curve[h + 1].fpr) /
                           (curve[h + 1].real_bits - curve[h].real_bits);
    steps.push({per_key / static_cast<double>(run_keys[i]), i});
  };
  for (size_t i = 0; i < n; i++) {
    if (run_keys[i] == 0) continue;
    left -= static_cast<double>(run_keys[i]) * curve[0].real_bits;
    push(i);
  }
  while (left > 0 && !steps.empty()) {
    const size_t i = steps.top().second;
    steps.pop();
    const SizePoint& a = curve[at[i]];
    const SizePoint& b = curve[at[i] + 1];
    const double cost =
        static_cast<double>(run_keys[i]) * (b.real_bits - a.real_bits);
    if (cost <= left) {
      left -= cost;
      at[i]++;
      spec_bits[i] = b.spec_bits;
      push(i);
      continue;
    }
    // Part of the segment. A kind that rounds the spec (cuckoo) might then
    // spend more than the fraction: keep the segment's start instead, and
    // give what is left to the other runs.
    const double t = left / cost;
    FilterSpec mid = avg;
    mid.bits_per_key = a.spec_bits + t * (b.spec_bits - a.spec_bits);
    const double mid_real =
        8.0 *
        static_cast<double>(
            internal::PlanFilter(mid, kCurveKeys, false).filter_bytes) /
        kCurveKeys;
    // (Bloom kinds round to bytes or blocks: ~0.001 bits per key here.)
    if (mid_real <= a.real_bits + t * (b.real_bits - a.real_bits) + 0.01) {
      spec_bits[i] = mid.bits_per_key;
      left = 0;
    }
  }
  return spec_bits;
}

}  // namespace

Status PlanLevelBits(FilterKind kind, const std::vector<uint64_t>& run_keys,
                     double avg_bits_per_key, LevelPlan* out) {
  FilterSpec avg;
  avg.kind = kind;
  avg.bits_per_key = avg_bits_per_key;
  Status s = avg.Validate();
  if (!s.ok()) return s;
  if (run_keys.empty()) {
    return Status::InvalidArgument("a tree needs at least one run of keys");
  }
  const std::vector<double> spec_bits =
      SpendBudget(avg, run_keys, SizeCurve(kind));
  const size_t n = run_keys.size();
  LevelPlan plan;
  plan.bits_per_key.assign(n, 0);
  plan.fpr.assign(n, 0);
  for (size_t i = 0; i < n; i++) {
    if (run_keys[i] == 0) continue;
    FilterSpec spec = avg;
    spec.bits_per_key = spec_bits[i];
    const FilterParams p = internal::PlanFilter(spec, run_keys[i]);
    const FilterParams u = internal::PlanFilter(avg, run_keys[i]);
    plan.bits_per_key[i] = spec_bits[i];
    plan.fpr[i] = p.expected_fpr;
    plan.expected_false_positives += p.expected_fpr;
    plan.uniform_false_positives += u.expected_fpr;
    plan.total_bits += 8.0 * static_cast<double>(p.filter_bytes);
    plan.budget_bits += 8.0 * static_cast<double>(u.filter_bytes);
  }
  *out = std::move(plan);
  return Status::OK();
}

}  // namespace sstfilter
