// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include "sstfilter/spec.h"

#include <charconv>
#include <cmath>
#include <system_error>

#include "policy/cuckoo_impl.h"

namespace sstfilter {
namespace {

struct KindInfo {
  FilterKind kind;
  const char* name;
  double min_bits;  // 0: no builder
  double max_bits;
};

// bits_per_key ranges: below 1 bit a Bloom filter is mostly ones; above 64
// (FPR ~1e-13 for Bloom) nothing is gained. Cuckoo needs a fingerprint of at
// least 4 bits, and no more than 32. Ribbon checks at most 32 fingerprint
// bits, and needs ~1.1 bits per key for one.
constexpr KindInfo kKinds[] = {
    {FilterKind::kEmpty, "empty", 0, 0},
    {FilterKind::kBloom, "bloom", 1, 64},
    {FilterKind::kBlockedBloom, "blocked_bloom", 1, 64},
    {FilterKind::kCuckoo, "cuckoo", internal::kCuckooMinTagBits,
     internal::kCuckooMaxTagBits},
    {FilterKind::kCountingBloom, "counting_bloom", 0, 0},
    {FilterKind::kDynamicCuckoo, "dynamic_cuckoo", 0, 0},
    {FilterKind::kRibbon, "ribbon", 2, 32},
};

const KindInfo* FindKind(FilterKind kind) {
  for (const KindInfo& k : kKinds) {
    if (k.kind == kind) return &k;
  }
  return nullptr;
}

std::string FormatNumber(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, res.ptr);
}

Status Bad(std::string_view text, const std::string& why) {
  return Status::InvalidArgument("filter spec \"" + std::string(text) +
                                 "\": " + why);
}

}  // namespace

const char* FilterKindName(FilterKind kind) {
  const KindInfo* k = FindKind(kind);
  return k ? k->name : "unknown";
}

double MinBitsPerKey(FilterKind kind) {
  const KindInfo* k = FindKind(kind);
  return k ? k->min_bits : 0;
}

double MaxBitsPerKey(FilterKind kind) {
  const KindInfo* k = FindKind(kind);
  return k ? k->max_bits : 0;
}

std::string FilterSpec::ToString() const {
  std::string s = FilterKindName(kind);
  s += ':';
  s += FormatNumber(bits_per_key);
  if (seed != 0) s += ":seed=" + std::to_string(seed);
  return s;
}

Status FilterSpec::Validate() const {
  const KindInfo* k = FindKind(kind);
  if (k == nullptr || k->max_bits == 0) {
    return Status::InvalidArgument(
        std::string("filter kind \"") + FilterKindName(kind) +
        "\" has no builder; use bloom, blocked_bloom, cuckoo or ribbon");
  }
  if (!(bits_per_key >= k->min_bits && bits_per_key <= k->max_bits)) {
    return Status::InvalidArgument(
        std::string(k->name) + " bits per key must be within [" +
        FormatNumber(k->min_bits) + ", " + FormatNumber(k->max_bits) +
        "], got " + FormatNumber(bits_per_key));
  }
  return Status::OK();
}

Status ParseFilterSpec(std::string_view text, FilterSpec* spec) {
  std::string_view rest = text;
  constexpr std::string_view kPrefix = kPolicyPrefix;
  if (rest.substr(0, kPrefix.size()) == kPrefix)
    rest.remove_prefix(kPrefix.size());

  const size_t colon = rest.find(':');
  if (colon == std::string_view::npos) {
    return Bad(text, "expected <kind>:<bits_per_key>, e.g. \"bloom:10\"");
  }
  const std::string_view kind_name = rest.substr(0, colon);
  rest.remove_prefix(colon + 1);

  FilterSpec out;
  const KindInfo* kind = nullptr;
  for (const KindInfo& k : kKinds) {
    if (kind_name == k.name && k.max_bits > 0) kind = &k;
  }
  if (kind == nullptr) {
    return Bad(text, "unknown filter kind \"" + std::string(kind_name) +
                         "\"; expected bloom, blocked_bloom, cuckoo or ribbon");
  }
  out.kind = kind->kind;

  std::string_view bits = rest.substr(0, rest.find(':'));
  rest.remove_prefix(bits.size());
  double value = 0;
  // from_chars accepts no leading '+' or spaces; reject nan/inf by hand.
  auto res = std::from_chars(bits.data(), bits.data() + bits.size(), value,
                             std::chars_format::fixed);
  if (bits.empty() || res.ec != std::errc() ||
      res.ptr != bits.data() + bits.size() || !std::isfinite(value)) {
    return Bad(text, "bits per key \"" + std::string(bits) +
                         "\" is not a decimal number");
  }
  out.bits_per_key = value;

  if (!rest.empty()) {
    constexpr std::string_view kSeed = ":seed=";
    if (rest.substr(0, kSeed.size()) != kSeed) {
      return Bad(text,
                 "unexpected \"" + std::string(rest) +
                     "\" after bits per key; only \":seed=<n>\" may follow");
    }
    rest.remove_prefix(kSeed.size());
    auto r = std::from_chars(rest.data(), rest.data() + rest.size(), out.seed);
    if (rest.empty() || r.ec != std::errc() ||
        r.ptr != rest.data() + rest.size()) {
      return Bad(text, "seed \"" + std::string(rest) +
                           "\" is not an unsigned 64-bit integer");
    }
  }

  Status s = out.Validate();
  if (!s.ok()) return Bad(text, s.message());
  *spec = out;
  return Status::OK();
}

}  // namespace sstfilter
