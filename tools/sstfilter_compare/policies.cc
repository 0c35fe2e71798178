// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include "tools/sstfilter_compare/policies.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string_view>
#include <utility>

#include "policy/spec_parse.h"
#include "sstfilter/filter.h"

namespace sstfilter {
namespace compare {
namespace {

// Built-in bits-per-key ranges: RocksDB treats < 1 as "no filter" or 62%
// FPR; LevelDB takes an int. 64 is far past any useful setting.
constexpr double kBuiltinMinBits = 1;
constexpr double kBuiltinMaxBits = 64;

Status Bad(std::string_view entry, const std::string& why) {
  return Status::InvalidArgument("policy \"" + std::string(entry) +
                                 "\": " + why);
}

bool StartsWith(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

// The built-in families: the policy name (with ":<bits>" in a policy),
// the name the reports use, and the engine that has it.
struct Builtin {
  Family family;
  const char* name;
  const char* display;
  unsigned engines;
};
constexpr Builtin kBuiltins[] = {
    {Family::kRocksDBBloom, "rocksdb:bloom", "RocksDB's Bloom", kRocksDB},
    {Family::kRocksDBRibbon, "rocksdb:ribbon", "RocksDB's Ribbon", kRocksDB},
    {Family::kRocksDBRibbonAll, "rocksdb:ribbon_all",
     "RocksDB's Ribbon everywhere", kRocksDB},
    {Family::kLevelDBBloom, "leveldb:bloom", "LevelDB's Bloom", kLevelDB},
};

// The row of a built-in family; null for kNone and kSstfilter.
const Builtin* FindBuiltin(Family family) {
  for (const Builtin& b : kBuiltins) {
    if (b.family == family) return &b;
  }
  return nullptr;
}

// Parses a built-in "<prefix><bits>" policy.
Status ParseBuiltin(std::string_view entry, std::string_view bits,
                    Family family, Policy* out) {
  double v = 0;
  if (!internal::ParseDecimal(bits, &v)) {
    return Bad(entry, "bits per key \"" + std::string(bits) +
                          "\" is not a decimal number");
  }
  if (!(v >= kBuiltinMinBits && v <= kBuiltinMaxBits)) {
    return Bad(entry, "bits per key must be within [1, 64]");
  }
  if (family == Family::kLevelDBBloom && v != std::floor(v)) {
    return Bad(entry, "LevelDB's Bloom takes whole bits per key");
  }
  out->family = family;
  out->bits_per_key = v;
  return Status::OK();
}

// <policy> of the grammar.
Status ParsePolicy(std::string_view entry, std::string_view text, Policy* out) {
  *out = Policy();
  if (text == "none") return Status::OK();
  for (const Builtin& b : kBuiltins) {
    const std::string prefix = std::string(b.name) + ":";
    if (StartsWith(text, prefix)) {
      return ParseBuiltin(entry, text.substr(prefix.size()), b.family, out);
    }
  }
  if (StartsWith(text, "rocksdb:") || StartsWith(text, "leveldb:")) {
    std::string expected;
    for (const Builtin& b : kBuiltins) {
      if (!expected.empty()) {
        expected += &b == std::end(kBuiltins) - 1 ? " or " : ", ";
      }
      expected += std::string(b.name) + ":<bits>";
    }
    return Bad(entry, "unknown built-in policy; expected " + expected);
  }
  Status s = ParseFilterSpec(text, &out->spec);
  if (!s.ok()) return Bad(entry, s.message());
  s = out->spec.Validate();
  if (!s.ok()) return Bad(entry, s.message());
  out->family = Family::kSstfilter;
  return Status::OK();
}

// <family> of the grammar: an sstfilter kind (with an optional seed) or a
// sizeable built-in.
Status ParseFamily(std::string_view entry, std::string_view text, Policy* out) {
  *out = Policy();
  for (const Builtin& b : kBuiltins) {
    if (text == b.name) {
      out->family = b.family;
      return Status::OK();
    }
  }
  if (text == "none") return Bad(entry, "'none' has no size to choose");
  // An sstfilter kind with its options: parse it as a spec at the bits
  // per key of the kind's example spec ("ribbon:by_level" as
  // "ribbon:10:by_level") and keep kind and options.
  std::string probe(text);
  const size_t colon = std::min(probe.find(':'), probe.size());
  std::string name = probe.substr(0, colon);
  if (name.rfind(kPolicyPrefix, 0) == 0)
    name.erase(0, sizeof(kPolicyPrefix) - 1);
  // "auto" is no kind of the format but a spec of its own ("auto:10").
  FilterKind kind;
  FilterSpec example, spec;
  bool ok = name == "auto"
                ? ParseFilterSpec("auto:10", &example).ok()
                : ParseFilterKind(name, &kind) &&
                      ParseFilterSpec(ExampleSpec(kind), &example).ok();
  if (ok) {
    probe.insert(colon, ":" + internal::FormatDecimal(example.bits_per_key));
    ok = ParseFilterSpec(probe, &spec).ok();
  }
  if (!ok) {
    std::string kinds;
    for (FilterKind k : SpecKinds()) {
      kinds += std::string(kinds.empty() ? "" : ", ") + FilterKindName(k);
    }
    return Bad(entry, "\"" + std::string(text) +
                          "\" is not a family: expected rocksdb:bloom, "
                          "rocksdb:ribbon, rocksdb:ribbon_all, leveldb:bloom "
                          "or an sstfilter kind (" +
                          kinds + "), with options (ribbon:by_level)");
  }
  out->family = Family::kSstfilter;
  out->spec = spec;
  return Status::OK();
}

std::string ReplaceAll(std::string s, char from, const std::string& to) {
  std::string out;
  for (char c : s) {
    if (c == from) {
      out += to;
    } else {
      out += c;
    }
  }
  return out;
}

std::string PlainLabel(const Policy& p) { return p.ToString(); }

std::string SizedLabel(const PolicyRequest& r) {
  return r.policy.FamilyName() + "@" + r.reference.ToString();
}

// The shortest decimal of at most 3 places (RocksDB keeps millibits) at or
// below `bits` that gives the same filter size; else `bits` rounded down to
// 3 places while that stays at or above `min_bits`; else `bits`.
double ShortestEqualSize(double bits, double min_bits,
                         const std::function<double(double)>& size_at) {
  const double size = size_at(bits);
  for (double scale : {1.0, 10.0, 100.0, 1000.0}) {
    const double c = std::floor(bits * scale) / scale;
    if (c >= min_bits && size_at(c) == size) return c;
  }
  const double rounded = std::floor(bits * 1000) / 1000;
  return rounded < min_bits ? bits : rounded;
}

}  // namespace

const char* EngineName(EngineBit e) {
  switch (e) {
    case kRocksDB:
      return "rocksdb";
    case kLevelDB:
      return "leveldb";
    default:
      return "?";
  }
}

std::vector<std::string> SplitList(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t end = list.find(',', start);
    out.push_back(list.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

std::string FormatNumber(double v) { return internal::FormatNumber(v); }

std::string Policy::ToString() const {
  if (const Builtin* b = FindBuiltin(family)) {
    return std::string(b->name) + ":" + internal::FormatDecimal(bits_per_key);
  }
  return family == Family::kSstfilter ? spec.ToString() : "none";
}

std::string Policy::FamilyName() const {
  if (const Builtin* b = FindBuiltin(family)) return b->name;
  if (family != Family::kSstfilter) return "none";
  // The spec without its second field, the bits per key.
  const std::string s = spec.ToString();
  const size_t bits = s.find(':');
  const size_t end = s.find(':', bits + 1);
  return s.substr(0, bits) + (end == std::string::npos ? "" : s.substr(end));
}

unsigned Policy::engines() const {
  const Builtin* b = FindBuiltin(family);
  return b != nullptr ? b->engines : kAllEngines;
}

std::string Policy::BuiltinName() const {
  const Builtin* b = FindBuiltin(family);
  return b != nullptr ? b->display : "";
}

Status ParsePolicyEntry(const std::string& text, PolicyRequest* out) {
  PolicyRequest r;
  r.text = text;
  std::string_view rest = text;
  unsigned scope = kAllEngines;
  if (StartsWith(rest, "rocksdb/")) {
    scope = kRocksDB;
    rest.remove_prefix(8);
  } else if (StartsWith(rest, "leveldb/")) {
    scope = kLevelDB;
    rest.remove_prefix(8);
  }
  if (rest.empty()) return Bad(text, "empty policy");
  const size_t at = rest.find('@');
  Status s;
  if (at == std::string_view::npos) {
    s = ParsePolicy(text, rest, &r.policy);
    if (!s.ok()) return s;
    r.engines = scope & r.policy.engines();
  } else {
    const std::string_view ref = rest.substr(at + 1);
    if (ref.find('@') != std::string_view::npos) {
      return Bad(text, "only one '@' is allowed");
    }
    s = ParseFamily(text, rest.substr(0, at), &r.policy);
    if (!s.ok()) return s;
    s = ParsePolicy(text, ref, &r.reference);
    if (!s.ok()) return s;
    if (r.reference.family == Family::kNone) {
      return Bad(text, "'none' has no filter memory to match");
    }
    r.sized = true;
    r.engines = scope & r.policy.engines() & r.reference.engines();
  }
  if (r.engines == 0) {
    return Bad(text,
               "runs on no engine (its parts belong to different "
               "engines, or its scope excludes its engine)");
  }
  *out = r;
  return Status::OK();
}

Status ParsePolicyList(const std::string& list, const std::string& sweep_bits,
                       std::vector<PolicyRequest>* out) {
  std::vector<std::string> sweep;
  if (!sweep_bits.empty()) {
    for (const std::string& b : SplitList(sweep_bits)) {
      double v = 0;
      if (!internal::ParseDecimal(b, &v) || v <= 0) {
        return Status::InvalidArgument("--sweep_bits: \"" + b +
                                       "\" is not a positive number");
      }
      sweep.push_back(b);
    }
  }
  std::vector<PolicyRequest> result;
  bool any_star = false;
  for (const std::string& entry : SplitList(list)) {
    if (entry.empty()) {
      return Status::InvalidArgument("--policies: empty entry in \"" + list +
                                     "\"");
    }
    std::vector<std::string> expanded;
    if (entry.find('*') != std::string::npos) {
      any_star = true;
      if (sweep.empty()) {
        return Bad(entry, "has '*' but --sweep_bits is empty");
      }
      for (const std::string& b : sweep) {
        expanded.push_back(ReplaceAll(entry, '*', b));
      }
    } else {
      expanded.push_back(entry);
    }
    for (const std::string& e : expanded) {
      PolicyRequest r;
      Status s = ParsePolicyEntry(e, &r);
      if (!s.ok()) return s;
      result.push_back(r);
    }
  }
  if (!sweep.empty() && !any_star) {
    return Status::InvalidArgument(
        "--sweep_bits is set but no --policies entry has a '*' to replace");
  }
  *out = result;
  return Status::OK();
}

std::vector<PlannedRun> PlanRuns(const std::vector<PolicyRequest>& requests,
                                 EngineBit engine) {
  std::vector<PlannedRun> runs;
  auto find = [&runs](const std::string& label) -> PlannedRun* {
    for (PlannedRun& r : runs) {
      if (r.label == label) return &r;
    }
    return nullptr;
  };
  // Plain entries that appear anywhere in the list are not implicit.
  auto listed = [&](const std::string& label) {
    for (const PolicyRequest& r : requests) {
      if ((r.engines & engine) && !r.sized && PlainLabel(r.policy) == label) {
        return true;
      }
    }
    return false;
  };
  for (const PolicyRequest& r : requests) {
    if (!(r.engines & engine)) continue;
    if (!r.sized) {
      if (find(PlainLabel(r.policy)) != nullptr) continue;
      PlannedRun p;
      p.label = PlainLabel(r.policy);
      p.policy = r.policy;
      runs.push_back(p);
      continue;
    }
    const std::string ref = PlainLabel(r.reference);
    if (find(ref) == nullptr) {
      PlannedRun p;
      p.label = ref;
      p.policy = r.reference;
      p.implicit = !listed(ref);
      runs.push_back(p);
    }
    const std::string label = SizedLabel(r);
    if (find(label) != nullptr) continue;
    PlannedRun p;
    p.label = label;
    p.sized = true;
    p.policy = r.policy;
    p.reference = r.reference;
    runs.push_back(p);
  }
  return runs;
}

namespace {

// `tables` with equal level and keys merged: (table, how many).
std::vector<std::pair<FilterTable, uint64_t>> MergeTables(
    const std::vector<FilterTable>& tables) {
  std::map<std::pair<int, uint64_t>, uint64_t> counts;
  for (const FilterTable& t : tables) {
    if (t.keys > 0) counts[{t.level, t.keys}]++;
  }
  std::vector<std::pair<FilterTable, uint64_t>> out;
  for (const auto& [key, count] : counts) {
    FilterTable t;
    t.level = key.first;
    t.keys = key.second;
    out.emplace_back(t, count);
  }
  return out;
}

// Bisects for the largest bits per key in [lo, hi] whose size_at is at most
// `target`. REQUIRES size_at(lo) <= target < size_at(hi).
double LargestFitting(double lo, double hi, bool whole_bits, double target,
                      const std::function<double(double)>& size_at) {
  const double min_bits = lo;
  if (whole_bits) {
    while (hi - lo > 1) {
      const double mid = std::floor((lo + hi) / 2);
      (size_at(mid) <= target ? lo : hi) = mid;
    }
    return lo;
  }
  for (int i = 0; i < 40 && hi - lo > 1e-4; i++) {
    const double mid = (lo + hi) / 2;
    (size_at(mid) <= target ? lo : hi) = mid;
  }
  return ShortestEqualSize(lo, min_bits, size_at);
}

}  // namespace

Status SizeToMemory(const Policy& x, const std::vector<FilterTable>& tables,
                    double target_bytes, const FilterBytesFn& builtin_bytes,
                    Policy* out) {
  const auto groups = MergeTables(tables);
  uint64_t keys = 0, filters = 0;
  for (const auto& [t, count] : groups) {
    keys += t.keys * count;
    filters += count;
  }
  if (keys == 0)
    return Status::InvalidArgument("no keys per filter to size for");
  double lo = kBuiltinMinBits, hi = kBuiltinMaxBits;
  const bool sstfilter = x.family == Family::kSstfilter;
  if (sstfilter) {
    // An auto spec's bits are those of whichever kind it picks: [1, 64].
    lo = x.spec.auto_kind ? 1 : MinBitsPerKey(x.spec.kind);
    hi = x.spec.auto_kind ? 64 : MaxBitsPerKey(x.spec.kind);
    FilterSpec probe = x.spec;
    probe.bits_per_key = lo;
    std::unique_ptr<FilterBuilder> builder;
    Status s = NewFilterBuilder(probe, &builder, RunSecret().get());
    if (!s.ok()) return s;
  }
  Status error;
  // Bytes of x's filters for all tables at b bits per key.
  auto size_at = [&](double b) -> double {
    Policy p = x;
    p.bits_per_key = b;
    p.spec.bits_per_key = b;
    std::unique_ptr<FilterBuilder> sized;
    if (sstfilter && !NewFilterBuilder(p.spec, &sized, RunSecret().get()).ok())
      return INFINITY;
    double total = 0;
    for (const auto& [t, count] : groups) {
      uint64_t bytes = 0;
      if (sized) {
        bytes = sized->FilterSize(t.keys);
      } else {
        error = builtin_bytes(p, t.level, t.keys, &bytes);
        if (!error.ok()) return INFINITY;
      }
      total += static_cast<double>(bytes) * static_cast<double>(count);
    }
    return total;
  };
  const double smallest = size_at(lo);
  if (!error.ok()) return error;
  if (smallest > target_bytes) {
    return Status::InvalidArgument(
        x.FamilyName() + " at its minimum of " + FormatNumber(lo) +
        " bits/key already takes " + FormatNumber(smallest) + " bytes for " +
        std::to_string(keys) + " keys in " + std::to_string(filters) +
        " filter(s), more than the " + FormatNumber(std::round(target_bytes)) +
        " to match");
  }
  double best = hi;
  if (size_at(hi) > target_bytes) {
    best = LargestFitting(lo, hi, x.family == Family::kLevelDBBloom,
                          target_bytes, size_at);
  }
  if (!error.ok()) return error;
  *out = x;
  out->bits_per_key = best;
  out->spec.bits_per_key = best;
  return Status::OK();
}

Status SizeToMemory(const Policy& x, uint64_t keys_per_filter,
                    double target_bytes, const FilterBytesFn& builtin_bytes,
                    Policy* out) {
  FilterTable one;
  one.keys = keys_per_filter;
  return SizeToMemory(x, std::vector<FilterTable>{one}, target_bytes,
                      builtin_bytes, out);
}

std::shared_ptr<const FilterSecret> RunSecret() {
  static const std::shared_ptr<const FilterSecret> secret = [] {
    std::random_device rd;
    std::string bytes;
    while (bytes.size() < 32) {
      const uint32_t r = rd();
      bytes.append(reinterpret_cast<const char*>(&r), sizeof(r));
    }
    std::unique_ptr<const FilterSecret> s;
    Status st = NewFilterSecret(bytes, &s);
    assert(st.ok());  // 32 bytes: always enough
    return std::shared_ptr<const FilterSecret>(std::move(s));
  }();
  return secret;
}

}  // namespace compare
}  // namespace sstfilter
