// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include <cassert>
#include <chrono>
#include <limits>
#include <random>

#include "policy/format.h"
#include "policy/kinds.h"
#include "policy/primitives.h"
#include "sstfilter/filter.h"
#include "sstfilter/hash.h"
#include "sstfilter/secret.h"

namespace sstfilter {

FilterBuilder::~FilterBuilder() = default;

uint64_t FilterBuilder::HashKey(std::string_view key) const {
  return internal::FilterHash(key, seed_, secret_);
}

FilterSpec FilterBuilder::FilterSpecNow() const {
  FilterSpec s = spec_;
  s.seed = seed_;
  return s;
}

void FilterBuilder::EndFilter(size_t start, std::string* dst) {
  if (secret_ != nullptr) {
    internal::SetTrailerKeyId(secret_->key_id(), start, dst);
  }
  if (spec_.salt) NextSeed();
}

// The seeds of a salted builder: Mix64 of a Weyl sequence started at 64
// bits from std::random_device (docs/FORMAT.md, "Salt"). Mix64 is a
// bijection, so the seeds of one builder repeat only after 2^64 filters;
// 0 (seed absent) is skipped.
void FilterBuilder::NextSeed() {
  if (salt_state_ == 0) {
    try {
      std::random_device rd;
      salt_state_ = (uint64_t{rd()} << 32) ^ rd();
    } catch (...) {
      // No entropy source (rare; never an exception through an adapter):
      // the clock and this builder's address, still a seed per filter.
      salt_state_ = internal::Mix64(
          static_cast<uint64_t>(
              std::chrono::steady_clock::now().time_since_epoch().count()) ^
          reinterpret_cast<uintptr_t>(this));
    }
  }
  do {
    salt_state_ += internal::kGolden64;
    seed_ = internal::Mix64(salt_state_);
  } while (seed_ == 0);
}

size_t FilterBuilder::MaxEntriesForSize(size_t bytes) const {
  if (FilterSize(1) > bytes) return 0;
  // FilterSize is non-decreasing in n: binary search for the last n that
  // fits. About one bit per key is the least any kind spends (a blocked
  // Bloom filter rounded down to whole blocks spends a little less), so
  // the search starts from 8 * bytes and doubles past it if need be;
  // FilterSize is SIZE_MAX past kMaxPlanKeys.
  size_t lo = 1, hi = bytes > std::numeric_limits<size_t>::max() / 8
                          ? std::numeric_limits<size_t>::max()
                          : bytes * 8 + 1;
  while (hi < std::numeric_limits<size_t>::max() && FilterSize(hi) <= bytes) {
    lo = hi;
    hi = hi > std::numeric_limits<size_t>::max() / 2
             ? std::numeric_limits<size_t>::max()
             : 2 * hi;
  }
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

void AppendEmptyFilter(const FilterSpec& spec, std::string* dst) {
  Trailer t;
  t.kind = FilterKind::kEmpty;
  SetTrailerHashing(spec, &t);
  AppendTrailer(t, dst);
}

uint64_t PlannedFilterBytes(const KindPlan& plan, const FilterSpec& spec) {
  Trailer t;
  t.kind = plan.params.kind;
  t.payload_size = plan.payload_bytes;
  SetTrailerHashing(spec, &t);
  t.params_size = plan.kind_params_size;
  t.params[0] = plan.first_param;
  return plan.payload_bytes + TrailerSize(t);
}

FilterParams PlanFilter(const FilterSpec& spec, uint64_t n, bool with_fpr) {
  assert(n <= kMaxPlanKeys);
  // An auto spec writes the kind it chooses for n keys.
  if (spec.auto_kind)
    return PlanFilter(ChooseKindForKeys(spec, n), n, with_fpr);
  const KindRow* row = FindKindRow(spec.kind);
  assert(row != nullptr && row->plan != nullptr);  // spec.Validate()
  KindPlan plan = row->plan(spec, n, with_fpr);
  plan.params.filter_bytes = PlannedFilterBytes(plan, spec);
  return plan.params;
}

size_t HashListBuilder::FilterSize(size_t num_entries) const {
  if (num_entries > kMaxPlanKeys) return std::numeric_limits<size_t>::max();
  return PlanFilter(FilterSpecNow(), num_entries, /*with_fpr=*/false)
      .filter_bytes;
}

}  // namespace internal

Status NewFilterBuilder(const FilterSpec& spec,
                        std::unique_ptr<FilterBuilder>* out,
                        const FilterSecret* secret) {
  Status s = spec.Validate();
  if (!s.ok()) return s;
  if (spec.keyed && secret == nullptr) {
    return Status::InvalidArgument("spec \"" + spec.ToString() +
                                   "\" is keyed: building it needs the "
                                   "application's FilterSecret");
  }
  // Validate() admits only kinds with a builder.
  std::unique_ptr<FilterBuilder> b =
      spec.auto_kind ? internal::NewAutoBuilder(spec, secret)
                     : internal::FindKindRow(spec.kind)->new_builder(spec);
  if (spec.keyed) b->secret_ = secret;
  if (spec.salt) b->NextSeed();
  *out = std::move(b);
  return Status::OK();
}

}  // namespace sstfilter
