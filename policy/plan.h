// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Internal: planning, the first step of every filter a builder writes.
//
//   FilterSpec (kind, bits per key, seed; sstfilter/spec.h)
//     -> plan      PlanFilter: the kind actually written, its parameters and
//                  sizes for n distinct keys (PlanBloomFamily, PlanCuckoo)
//     -> payload   Append*Filter appends the kind's payload to the caller's
//                  buffer (bloom.h, cuckoo.h; hot code in
//                  bloom_impl.h, cuckoo_impl.h)
//     -> trailer   AppendTrailer (format.h) appends kind, sizes and params
//     -> FilterReader::Open (reader.cc) reads kind and params back from the
//                  trailer and answers MayMatch from the payload.
//
// FilterSize, ParamsForSpec and ParamsForFpr answer from the same plan, so
// a prediction is exactly what a builder writes.

#ifndef SSTFILTER_POLICY_PLAN_H_
#define SSTFILTER_POLICY_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "policy/hash_list.h"
#include "sstfilter/filter.h"
#include "sstfilter/params.h"
#include "sstfilter/spec.h"

namespace sstfilter {
namespace internal {

// Filters whose standard-Bloom payload would be smaller than this are
// written as standard Bloom even for blocked_bloom specs: at that size every
// probe is in a few cache lines anyway, and the standard form is both more
// accurate and free of the blocked form's rounding to whole 64-byte blocks
// (LevelDB writes filters of ~36 keys, ~45 bytes). Cuckoo specs whose table
// would be smaller may be written as standard Bloom too (PlanCuckoo).
inline constexpr uint64_t kMinBlockedPayload = 1024;

// Most keys one filter may be planned for: 2^52, about 4.5e15. Beyond it
// no filter can exist (its hashes alone would take 32 PiB), and payload
// sizes would no longer be exact in a double (n * bits_per_key) or fit in
// 64 bits. Size queries for more keys answer "too large", never wrap.
inline constexpr uint64_t kMaxPlanKeys = uint64_t{1} << 52;

// What a spec's bits per key promise (docs/FORMAT.md, "What a spec's
// bits promise"): an FPR, that of the spec's filter of kLargeFilterKeys
// keys. No filter a builder writes for the spec, of any n, has an expected
// FPR above kSmallFilterFprSlack times it: where n * bits_per_key bits
// would miss that (small filters, whose rounding to whole blocks or slots
// weighs), the filter takes the fewest bytes that reach it.
inline constexpr uint64_t kLargeFilterKeys = uint64_t{1} << 20;
inline constexpr double kSmallFilterFprSlack = 1.1;

// The most bytes, trailer included, a builder writes for n >= 1 keys at
// `bits_per_key` where those bits reach the FPR the spec promises:
// n * bits_per_key / 8 plus a fixed allowance for the trailer and
// rounding (docs/FORMAT.md, "Size bound"; a cuckoo spec spends more bits
// per key than it names, and a small filter that needs more bytes to keep
// its FPR takes them).
inline constexpr uint64_t kFilterSlackBytes = 40;
inline uint64_t MaxFilterBytes(uint64_t n, double bits_per_key) {
  return static_cast<uint64_t>(static_cast<double>(n) * bits_per_key / 8) +
         kFilterSlackBytes;
}

// The parameters of the filter a builder for `spec` writes for `n` distinct
// keys: the kind actually written, payload and total sizes, and, if
// `with_fpr`, the expected FPR (costly: builders and size queries skip it).
// REQUIRES: spec.Validate().ok(), n <= kMaxPlanKeys.
FilterParams PlanFilter(const FilterSpec& spec, uint64_t n,
                        bool with_fpr = true);

// A kind's part of PlanFilter: everything but params.filter_bytes, which
// PlanFilter adds up from the payload and the trailer.
struct KindPlan {
  FilterParams params;
  uint64_t payload_bytes = 0;
  size_t kind_params_size = 0;  // bytes of kind params in the trailer
  // The first kind param: with the sizes and seed it decides which
  // trailer form the filter gets (UsesCompactTrailer, format.h).
  uint8_t first_param = 0;
};

// The start of every kind's plan for n keys: num_keys and the spec's
// bits_per_key set; for n == 0 the whole plan, an empty filter.
inline KindPlan StartPlan(const FilterSpec& spec, uint64_t n) {
  KindPlan plan;
  plan.params.num_keys = n;
  plan.params.bits_per_key = spec.bits_per_key;
  if (n == 0) plan.params.kind = FilterKind::kEmpty;
  return plan;
}

// Bytes of the filter `plan` describes for a filter built from `spec`:
// its payload and the trailer AppendTrailer writes for it. The one place a
// plan's total size is computed.
uint64_t PlannedFilterBytes(const KindPlan& plan, const FilterSpec& spec);

// Appends a zero-key filter ("never matches") with spec's hashing fields
// (SetTrailerHashing).
void AppendEmptyFilter(const FilterSpec& spec, std::string* dst);

// The builders' common part: keeps the added hashes, dropping a hash equal
// to the one added just before it (RocksDB and LevelDB repeat keys back to
// back), and answers FilterSize from PlanFilter.
class HashListBuilder : public FilterBuilder {
 public:
  void AddHash(uint64_t hash) override {
    if (!hashes_.empty() && hashes_.back() == hash) return;
    hashes_.push_back(hash);
  }
  size_t NumEntries() const override { return hashes_.size(); }
  size_t FilterSize(size_t num_entries) const override;

  // Exchanges the hashes added with *other's: how an auto builder hands
  // its keys to the builder of the kind it chose, without a copy.
  void SwapHashes(HashList* other) { std::swap(hashes_, *other); }

 protected:
  explicit HashListBuilder(const FilterSpec& spec) : FilterBuilder(spec) {}
  HashList hashes_;
};

// The builder of an auto spec (cost_plan.cc): keeps the hashes, and at
// Finish writes the filter of ChooseKindForKeys(spec, its keys) with a
// builder of that kind. `secret` as NewFilterBuilder's.
std::unique_ptr<FilterBuilder> NewAutoBuilder(const FilterSpec& spec,
                                              const FilterSecret* secret);

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_POLICY_PLAN_H_
