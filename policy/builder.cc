// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include <cassert>
#include <limits>

#include "policy/bloom_builder.h"
#include "policy/cuckoo_builder.h"
#include "policy/format.h"
#include "policy/ribbon.h"
#include "sstfilter/filter.h"
#include "sstfilter/hash.h"

namespace sstfilter {

FilterBuilder::~FilterBuilder() = default;

void FilterBuilder::AddKey(std::string_view key) {
  AddHash(Hash64(key, spec_.seed));
}

size_t FilterBuilder::MaxEntriesForSize(size_t bytes) const {
  if (FilterSize(1) > bytes) return 0;
  // FilterSize is non-decreasing in n: binary search for the last n that
  // fits. Every kind needs at least one bit per key, so 8 * bytes bounds it.
  size_t lo = 1, hi = bytes > std::numeric_limits<size_t>::max() / 8
                          ? std::numeric_limits<size_t>::max()
                          : bytes * 8 + 1;
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    if (FilterSize(mid) <= bytes) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

namespace internal {

void AppendEmptyFilter(uint64_t seed, std::string* dst) {
  Trailer t;
  t.kind = FilterKind::kEmpty;
  t.seed = seed;
  AppendTrailer(t, dst);
}

FilterParams PlanFilter(const FilterSpec& spec, uint64_t n, bool with_fpr) {
  assert(n <= kMaxPlanKeys);
  KindPlan plan;
  switch (spec.kind) {
    case FilterKind::kBloom:
    case FilterKind::kBlockedBloom:
      plan = PlanBloomFamily(spec, n, with_fpr);
      break;
    case FilterKind::kCuckoo:
      plan = PlanCuckoo(spec, n);
      break;
    case FilterKind::kRibbon:
      plan = PlanRibbon(spec, n).plan;
      break;
    default:
      break;  // Validate() admits no other kind
  }
  Trailer t;
  t.kind = plan.params.kind;
  t.payload_size = plan.payload_bytes;
  t.seed = spec.seed;
  t.params_size = plan.kind_params_size;
  t.params[0] = plan.first_param;
  plan.params.filter_bytes = plan.payload_bytes + TrailerSize(t);
  return plan.params;
}

size_t HashListBuilder::FilterSize(size_t num_entries) const {
  if (num_entries > kMaxPlanKeys) return std::numeric_limits<size_t>::max();
  return PlanFilter(spec(), num_entries, /*with_fpr=*/false).filter_bytes;
}

}  // namespace internal

Status NewFilterBuilder(const FilterSpec& spec,
                        std::unique_ptr<FilterBuilder>* out) {
  Status s = spec.Validate();
  if (!s.ok()) return s;
  switch (spec.kind) {
    case FilterKind::kBloom:
    case FilterKind::kBlockedBloom:
      *out = internal::NewBloomFamilyBuilder(spec);
      return Status::OK();
    case FilterKind::kCuckoo:
      *out = internal::NewCuckooBuilder(spec);
      return Status::OK();
    case FilterKind::kRibbon:
      *out = internal::NewRibbonBuilder(spec);
      return Status::OK();
    default:
      return Status::NotSupported(std::string("no builder for filter kind ") +
                                  FilterKindName(spec.kind));
  }
}

}  // namespace sstfilter
