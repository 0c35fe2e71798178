// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The table of kinds (kinds.h): one row per kind of the format.

#include "policy/kinds.h"

#include <string>
#include <vector>

#include "policy/bloom/bloom.h"
#include "policy/cuckoo/cuckoo.h"
#include "policy/cuckoo/cuckoo_impl.h"
#include "policy/ribbon/ribbon.h"

namespace sstfilter {
namespace internal {
namespace {

// A zero-key filter: no params, no payload; never matches.
bool DecodeEmpty(const Trailer& t, const uint8_t*, DecodedFilter* out) {
  if (t.params_size != 0 || t.payload_size != 0) return false;
  out->query = &kConstantQuery<false>;
  return true;
}

// A kind the point reader does not read (the range kind): "may match".
bool DecodeNotAPointFilter(const Trailer&, const uint8_t*, DecodedFilter*) {
  return false;
}

KindPlan PlanCuckooKind(const FilterSpec& spec, uint64_t n, bool) {
  return PlanCuckoo(spec, n);  // the plan always has its FPR: it is cheap
}

KindPlan PlanRibbonKind(const FilterSpec& spec, uint64_t n, bool) {
  return PlanRibbon(spec, n).plan;
}

// bits_per_key ranges: below 1 bit a Bloom filter is mostly ones; above 64
// (FPR ~1e-13 for Bloom) nothing is gained. Cuckoo needs a fingerprint of
// at least 4 bits, and no more than 32. Ribbon checks at most 32
// fingerprint bits, and needs ~1.1 bits per key for one.
//
// Rows are in kind-byte order, one per FilterKind value (FindKindRow
// indexes them by it).
const KindRow kKindTable[] = {
    {FilterKind::kEmpty, "empty", 0, 0, "", nullptr, nullptr, DecodeEmpty,
     "a filter of no keys: never matches"},
    {FilterKind::kBloom, "bloom", 1, 64, "bloom:10", PlanBloomFamily,
     NewBloomFamilyBuilder, DecodeBloom,
     "standard Bloom: k probes over m bits, the lowest FPR per bit of the "
     "Bloom kinds"},
    {FilterKind::kBlockedBloom, "blocked_bloom", 1, 64, "blocked_bloom:10",
     PlanBloomFamily, NewBloomFamilyBuilder, DecodeBlockedBloom,
     "Bloom with every probe of a key in one 64-byte block: one cache miss"},
    {FilterKind::kCuckoo, "cuckoo", kCuckooMinTagBits, kCuckooMaxTagBits,
     "cuckoo:12", PlanCuckooKind, NewCuckooBuilder, DecodeCuckoo,
     "static cuckoo: fingerprints in 4-slot buckets, two cache lines"},
    {FilterKind::kCountingBloom, "counting_bloom", 0, 0, "", nullptr, nullptr,
     DecodeCountingBloom,
     "mutable counting Bloom (sstfilter/mutable.h): 4-bit counters, erase"},
    {FilterKind::kDynamicCuckoo, "dynamic_cuckoo", 0, 0, "", nullptr, nullptr,
     DecodeCuckoo, "mutable cuckoo (sstfilter/mutable.h): insert and erase"},
    {FilterKind::kRibbon, "ribbon", 2, 32, "ribbon:10", PlanRibbonKind,
     NewRibbonBuilder, DecodeRibbon,
     "ribbon: a GF(2) linear system, near log2(1/FPR) bits per key"},
    // Not a point filter: its own spec, builder and reader (policy/range/);
    // a point reader answers "may match" for its bytes.
    {FilterKind::kRange, "range", 0, 0, "", nullptr, nullptr,
     DecodeNotAPointFilter,
     "range filter (sstfilter/range.h, range:<bits>): may a table hold a key "
     "in [lower, upper), so RocksDB scans skip it"},
};
constexpr size_t kNumKinds = sizeof(kKindTable) / sizeof(kKindTable[0]);
static_assert(kNumKinds == kNumFilterKinds,
              "a row per FilterKind: update kNumFilterKinds (policy/kinds.h)");

}  // namespace

const KindRow* FindKindRow(FilterKind kind) {
  const size_t i = static_cast<size_t>(kind);
  return i < kNumKinds ? &kKindTable[i] : nullptr;
}

const KindRow* FindKindRow(std::string_view name) {
  for (const KindRow& row : kKindTable) {
    if (name == row.name) return &row;
  }
  return nullptr;
}

const KindRow* KindRowsBegin() { return kKindTable; }
const KindRow* KindRowsEnd() { return kKindTable + kNumKinds; }

std::string SpecKindList() {
  std::vector<const char*> names;
  for (const KindRow& row : kKindTable) {
    if (row.new_builder != nullptr) names.push_back(row.name);
  }
  std::string list;
  for (size_t i = 0; i < names.size(); i++) {
    if (i > 0) list += i + 1 == names.size() ? " or " : ", ";
    list += names[i];
  }
  return list;
}

}  // namespace internal

const char* FilterKindName(FilterKind kind) {
  const internal::KindRow* row = internal::FindKindRow(kind);
  return row != nullptr ? row->name : "unknown";
}

double MinBitsPerKey(FilterKind kind) {
  const internal::KindRow* row = internal::FindKindRow(kind);
  return row != nullptr ? row->min_bits : 0;
}

double MaxBitsPerKey(FilterKind kind) {
  const internal::KindRow* row = internal::FindKindRow(kind);
  return row != nullptr ? row->max_bits : 0;
}

const std::vector<FilterKind>& FilterKinds() {
  static const auto* kinds = [] {
    auto* v = new std::vector<FilterKind>();
    for (const internal::KindRow& row : internal::kKindTable) {
      if (row.kind != FilterKind::kEmpty) v->push_back(row.kind);
    }
    return v;
  }();
  return *kinds;
}

const std::vector<FilterKind>& SpecKinds() {
  static const auto* kinds = [] {
    auto* v = new std::vector<FilterKind>();
    for (const internal::KindRow& row : internal::kKindTable) {
      if (row.new_builder != nullptr) v->push_back(row.kind);
    }
    return v;
  }();
  return *kinds;
}

bool ParseFilterKind(std::string_view name, FilterKind* kind) {
  const internal::KindRow* row = internal::FindKindRow(name);
  if (row == nullptr || row->kind == FilterKind::kEmpty) return false;
  *kind = row->kind;
  return true;
}

const char* ExampleSpec(FilterKind kind) {
  const internal::KindRow* row = internal::FindKindRow(kind);
  return row != nullptr ? row->example_spec : "";
}

}  // namespace sstfilter
