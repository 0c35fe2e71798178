// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// `sstfilter params`: the parameter calculation people otherwise do by hand,
// for every kind side by side, from the formulas the builders use
// (sstfilter/params.h), so the bytes printed are the bytes written.

#include "sstfilter/params.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "sstfilter/filter.h"
#include "sstfilter/mutable.h"
#include "sstfilter/spec.h"
#include "tools/commands.h"

namespace sstfilter {
namespace tool {
namespace {

// Whether a spec may name `kind` (mutable kinds have no FilterBuilder;
// their parameters come from a filter made for the target).
bool HasBuilder(FilterKind kind) {
  const std::vector<FilterKind>& kinds = SpecKinds();
  return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

// "bloom, ... or ribbon": the names of `kinds`, for messages.
std::string KindNames(const std::vector<FilterKind>& kinds) {
  std::string names;
  for (size_t i = 0; i < kinds.size(); i++) {
    if (i > 0) names += i + 1 == kinds.size() ? " or " : ", ";
    names += FilterKindName(kinds[i]);
  }
  return names;
}

// Mutable kinds have no ParamsForFpr: their parameters are read off a
// filter made for the target, with capacity up to kProbeKeys. Their
// memory is linear in the capacity, so a larger count scales it.
constexpr uint64_t kProbeKeys = uint64_t{1} << 20;

Status MutableParams(FilterKind kind, uint64_t keys, double fpr,
                     FilterParams* p, bool* scaled) {
  MutableFilterOptions o;
  o.capacity = std::min(keys, kProbeKeys);
  o.target_fpr = fpr;
  const double c = static_cast<double>(o.capacity);
  std::string bytes;
  Status s;
  *p = FilterParams();
  p->kind = kind;
  p->num_keys = keys;
  if (kind == FilterKind::kDynamicCuckoo) {
    DynamicCuckooFilter f;
    s = DynamicCuckooFilter::Create(o, &f);
    if (!s.ok()) return s;
    f.Serialize(&bytes);
    p->fingerprint_bits = f.fingerprint_bits();
    p->expected_fpr =
        CuckooFpr(f.fingerprint_bits(), c / static_cast<double>(f.num_slots()));
  } else {
    CountingBloomFilter f;
    s = CountingBloomFilter::Create(o, &f);
    if (!s.ok()) return s;
    f.Serialize(&bytes);
    p->num_probes = f.num_probes();
    p->expected_fpr = StandardBloomFpr(
        static_cast<double>(f.num_counters()) / c, f.num_probes());
  }
  *scaled = keys > kProbeKeys;
  p->filter_bytes =
      *scaled
          ? static_cast<uint64_t>(std::ceil(static_cast<double>(bytes.size()) *
                                            static_cast<double>(keys) / c))
          : bytes.size();
  p->bits_per_key =
      8.0 * static_cast<double>(p->filter_bytes) / static_cast<double>(keys);
  return Status::OK();
}

std::string HumanBytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    u++;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), u == 0 ? "%.0f %s" : "%.2f %s", bytes,
                units[u]);
  return buf;
}

// A dash for a parameter the kind does not have.
std::string IntOrDash(int v) { return v > 0 ? std::to_string(v) : "-"; }

// The rows of `sstfilter params`, and what the notes under them need.
struct ParamsTable {
  std::string rows;
  std::string problems;  // kinds not shown, with the reason
  bool any_mutable = false;
  bool written_as_other = false;
};

// The kinds with insert and erase (sstfilter/mutable.h).
bool IsMutable(FilterKind kind) {
  return kind == FilterKind::kCountingBloom ||
         kind == FilterKind::kDynamicCuckoo;
}

// Adds kind k's row for `keys` keys at FPR `fpr`, or its problem.
// REQUIRES: k has a builder or is mutable (not the range kind).
void AddKindRow(FilterKind k, uint64_t keys, double fpr, ParamsTable* out) {
  FilterParams p;
  const bool is_mutable = IsMutable(k);
  bool scaled = false;
  Status s = is_mutable ? MutableParams(k, keys, fpr, &p, &scaled)
                        : ParamsForFpr(k, keys, fpr, &p);
  out->any_mutable |= is_mutable && s.ok();
  // A kind this build cannot plan comes back as kEmpty: report it rather
  // than print zeros.
  if (s.ok() && p.kind == FilterKind::kEmpty) {
    s = Status::NotSupported(std::string(FilterKindName(k)) +
                             " is not available in this build");
  }
  if (!s.ok()) {
    out->problems +=
        std::string("  ") + FilterKindName(k) + ": " + s.message() + "\n";
    return;
  }
  // A spec to paste into a policy: bits per key rounded up to 1/100 (so
  // the FPR stays within target), and the filter that spec builds.
  std::string spec_text = "-";
  if (HasBuilder(k)) {
    FilterSpec spec;
    spec.kind = k;
    // Cuckoo specs name whole fingerprint bits ("cuckoo:10").
    spec.bits_per_key =
        p.fingerprint_bits > 0
            ? p.fingerprint_bits
            : std::min(std::ceil(p.bits_per_key * 100 - 1e-9) / 100,
                       MaxBitsPerKey(k));
    if (ParamsForSpec(spec, keys, &p).ok()) spec_text = spec.ToString();
  }
  const double bits_per_key =
      8.0 * static_cast<double>(p.filter_bytes) / static_cast<double>(keys);
  // At small sizes a blocked_bloom spec writes a standard Bloom filter.
  const bool other_kind = p.kind != k;
  out->written_as_other |= other_kind;
  char row[256];
  std::snprintf(
      row, sizeof(row), "%-15s %-20s %9.3f %7s %8s %c%13llu %13s %13.6g%%\n",
      (FilterKindName(k) + std::string(other_kind ? "*" : "")).c_str(),
      spec_text.c_str(), bits_per_key, IntOrDash(p.num_probes).c_str(),
      IntOrDash(p.fingerprint_bits).c_str(), scaled ? '~' : ' ',
      static_cast<unsigned long long>(p.filter_bytes),
      ("(" + HumanBytes(static_cast<double>(p.filter_bytes)) + ")").c_str(),
      100 * p.expected_fpr);
  out->rows += row;
}

// `params --levels=... --kind=auto[:<option>...]`: the plan of the spec
// "auto:<bits>[:<option>...]" over the runs, given top first; the leading
// runs of the first run's key count are L0 files (flushes), the rest levels.
int AutoLevelParams(const std::vector<uint64_t>& levels, double bits,
                    const std::string& kind) {
  char bits_text[64];
  std::snprintf(bits_text, sizeof(bits_text), "%.17g", bits);
  const std::string text = "auto:" + std::string(bits_text) + kind.substr(4);
  const std::string first =
      kind.size() > 5 ? kind.substr(5, kind.find(':', 5) - 5) : "";
  if (!first.empty() &&
      first.find_first_not_of("0123456789.") == std::string::npos) {
    std::fprintf(stderr,
                 "sstfilter: --kind=%s: the bits per key come from --bits; "
                 "--kind takes auto's options only (auto:read_us=3)\n",
                 kind.c_str());
    return kUsageError;
  }
  FilterSpec spec;
  Status s = ParseFilterSpec(text, &spec);
  size_t l0_runs = 0;
  while (l0_runs < levels.size() && levels[l0_runs] == levels[0]) l0_runs++;
  if (l0_runs == levels.size()) l0_runs = levels.size() > 1 ? 1 : 0;
  const std::vector<double> rebuilds = TreeRebuilds(levels, l0_runs);
  CostPlan plan;
  if (s.ok()) s = PlanFilterCosts(spec, levels, rebuilds, &plan);
  LevelPlan ribbon;
  if (s.ok()) s = PlanLevelBits(FilterKind::kRibbon, levels, bits, &ribbon);
  if (!s.ok()) {
    std::fprintf(stderr, "sstfilter: %s\n", s.message().c_str());
    return kUsageError;
  }
  double total = 0;
  for (uint64_t n : levels) total += static_cast<double>(n);
  std::printf(
      "%s: %zu runs (top first; the first %zu as L0 files), %.0f keys; an "
      "absent-key Get probes every run once\n"
      "cost per Get = query ns + %g us x false positives; build time at most "
      "%gx blocked_bloom's\n\n",
      spec.ToString().c_str(), levels.size(), l0_runs, total, spec.read_us,
      spec.build_x);
  std::printf("%-5s %14s %7s %-14s %9s %11s %11s %9s %11s %9s\n", "run", "keys",
              "share", "kind", "bits/key", "FPR", "reads/Get", "query ns",
              "build ns/key", "rebuilds");
  for (size_t i = 0; i < levels.size(); i++) {
    std::printf(
        "%-5zu %14llu %6.2f%% %-14s %9.3f %10.6f%% %11.6f %9.1f %11.1f %9.2f\n",
        i, static_cast<unsigned long long>(levels[i]),
        total > 0 ? 100 * static_cast<double>(levels[i]) / total : 0,
        FilterKindName(plan.kinds[i]), plan.bits_per_key[i], 100 * plan.fpr[i],
        plan.fpr[i], plan.query_ns[i], plan.build_ns[i], rebuilds[i]);
  }
  std::printf(
      "per absent Get: %.6f false positives (ribbon by level: %.6f), %.1f ns "
      "of filter queries, %.1f ns in all\n"
      "filter memory: %.0f bits, budget %.0f (%+.3f%%)\n"
      "build time: %.3gx that of blocked_bloom in every run (rebuilds x keys "
      "x build ns)\n",
      plan.expected_false_positives, ribbon.expected_false_positives,
      plan.expected_query_ns, plan.expected_cost_ns, plan.total_bits,
      plan.budget_bits,
      plan.budget_bits > 0 ? 100 * (plan.total_bits / plan.budget_bits - 1)
                           : 0.0,
      plan.blocked_bloom_build_ns > 0
          ? plan.build_ns_total / plan.blocked_bloom_build_ns
          : 1.0);
  std::printf(
      "\nbits/key as the kind's spec names it; memory counts every byte "
      "written. Costs: docs/LEVEL_SIZING.md.\n");
  return 0;
}

}  // namespace

int Params(uint64_t keys, double fpr, const std::string& kind) {
  // The point kinds: the range kind answers for ranges of keys, at an FPR
  // that depends on the range's length, in a table of its own.
  std::vector<FilterKind> kinds;
  for (FilterKind k : FilterKinds()) {
    if (k == FilterKind::kRange) continue;
    if (kind.empty() || kind == FilterKindName(k)) kinds.push_back(k);
  }
  if (kinds.empty()) {
    std::fprintf(stderr, "sstfilter: unknown --kind \"%s\"; expected %s\n",
                 kind.c_str(), KindNames(FilterKinds()).c_str());
    return kUsageError;
  }

  ParamsTable table;
  for (FilterKind k : kinds) AddKindRow(k, keys, fpr, &table);
  const std::string& rows = table.rows;
  const std::string& problems = table.problems;
  const bool any_mutable = table.any_mutable;
  const bool written_as_other = table.written_as_other;
  if (rows.empty()) {
    std::fprintf(stderr,
                 "sstfilter: no filter reaches FPR %g for %llu keys:\n%s", fpr,
                 static_cast<unsigned long long>(keys), problems.c_str());
    return kUsageError;
  }
  std::printf("%llu keys, target FPR %.6g%%\n",
              static_cast<unsigned long long>(keys), 100 * fpr);
  std::printf("%-15s %-20s %9s %7s %8s %14s %13s %14s\n", "kind", "spec",
              "bits/key", "probes", "fp_bits", "bytes", "", "expected FPR");
  std::printf("%s", rows.c_str());
  std::printf("bits/key counts every byte written, trailer included.\n");
  if (any_mutable) {
    std::printf(
        "counting_bloom and dynamic_cuckoo are mutable (insert and erase; "
        "sstfilter/mutable.h,\n`sstfilter dedup`): sized for N keys inside, "
        "4-bit counters; ~ scaled from %llu keys.\n",
        static_cast<unsigned long long>(kProbeKeys));
  }
  if (written_as_other) {
    std::printf(
        "* written as a standard bloom filter at this size "
        "(under 1 KiB, where blocking gains nothing)\n");
  }
  if (kind.empty()) {
    std::printf("\n");
    RangeParams(keys, fpr);
  }
  if (!problems.empty()) {
    std::fflush(stdout);
    std::fprintf(stderr, "not shown:\n%s", problems.c_str());
  }
  return 0;
}

int LevelParams(const std::vector<uint64_t>& levels, double bits,
                const std::string& kind) {
  if (kind == "auto" || kind.rfind("auto:", 0) == 0) {
    return AutoLevelParams(levels, bits, kind);
  }
  std::vector<FilterKind> kinds;
  for (FilterKind k : SpecKinds()) {
    if (kind.empty() || kind == FilterKindName(k)) kinds.push_back(k);
  }
  if (kinds.empty()) {
    std::fprintf(stderr,
                 "sstfilter: unknown --kind \"%s\"; expected %s, or auto\n",
                 kind.c_str(), KindNames(SpecKinds()).c_str());
    return kUsageError;
  }
  // Every plan first: a kind that cannot reach `bits` is reported on
  // stderr, the others printed; if none can, nothing goes to stdout.
  std::vector<FilterKind> planned;
  std::vector<LevelPlan> plans;
  std::string problems;
  for (FilterKind k : kinds) {
    LevelPlan plan;
    const Status s = PlanLevelBits(k, levels, bits, &plan);
    if (!s.ok()) {
      problems +=
          std::string("  ") + FilterKindName(k) + ": " + s.message() + "\n";
      continue;
    }
    planned.push_back(k);
    plans.push_back(std::move(plan));
  }
  if (planned.empty()) {
    std::fprintf(stderr, "sstfilter: no kind can plan %g bits per key:\n%s",
                 bits, problems.c_str());
    return kUsageError;
  }
  double total = 0;
  for (uint64_t n : levels) total += static_cast<double>(n);
  std::printf(
      "%zu runs, %.0f keys, %g bits per key on average; an absent-key lookup "
      "probes every run once\n",
      levels.size(), total, bits);
  for (size_t j = 0; j < planned.size(); j++) {
    const FilterKind k = planned[j];
    const LevelPlan& plan = plans[j];
    FilterSpec uniform;
    uniform.kind = k;
    uniform.bits_per_key = bits;
    std::printf("\n%s\n%-5s %14s %7s %9s %13s %13s\n", FilterKindName(k), "run",
                "keys", "share", "bits/key", "FPR", "uniform FPR");
    for (size_t i = 0; i < levels.size(); i++) {
      FilterParams u;
      // A kind whose range excludes `bits` has no uniform figure: "nan".
      if (levels[i] > 0 && !ParamsForSpec(uniform, levels[i], &u).ok()) {
        u.expected_fpr = std::nan("");
      }
      std::printf("%-5zu %14llu %6.2f%% %9.3f %12.6g%% %12.6g%%\n", i,
                  static_cast<unsigned long long>(levels[i]),
                  total > 0 ? 100 * static_cast<double>(levels[i]) / total : 0,
                  plan.bits_per_key[i], 100 * plan.fpr[i],
                  100 * u.expected_fpr);
    }
    std::printf(
        "false positives per absent lookup: %.6g by level, %.6g uniform "
        "(%.2fx fewer)\nfilter memory: %.0f bits by level, %.0f uniform "
        "(%+.3f%%)\n",
        plan.expected_false_positives, plan.uniform_false_positives,
        plan.expected_false_positives > 0
            ? plan.uniform_false_positives / plan.expected_false_positives
            : 1.0,
        plan.total_bits, plan.budget_bits,
        plan.budget_bits > 0 ? 100 * (plan.total_bits / plan.budget_bits - 1)
                             : 0.0);
  }
  std::printf(
      "\nbits/key as the kind's spec names it (cuckoo spends 1/0.95 of it); "
      "memory counts every byte written.\n");
  if (!problems.empty()) {
    std::fflush(stdout);
    std::fprintf(stderr, "not shown:\n%s", problems.c_str());
  }
  return 0;
}

}  // namespace tool
}  // namespace sstfilter
