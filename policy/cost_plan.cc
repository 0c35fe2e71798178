// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// auto: the kind and bits of each run's filter by expected cost per Get
// (sstfilter/params.h; docs/LEVEL_SIZING.md, "Cost per Get: auto").
//
// Solved with Lagrange multipliers. For a price mu per bit of memory and nu
// per nanosecond of build time, each run independently takes the option
// (a kind, and a point on that kind's convex FPR-vs-bits curve for the
// run's keys) that minimises
//   query_ns + R * fpr + mu * n * real_bits + nu * rebuilds * n * build_ns.
// Memory falls as mu rises, and build time as nu rises: mu is bisected to
// the smallest price whose memory fits the budget (for each nu tried), nu
// to the smallest whose build time fits build_x times blocked Bloom's.
// What the budget still holds then goes, as in PlanLevelBits, to the runs
// that save the most false positives per bit along their kind's curve.

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "policy/plan.h"
#include "policy/size_curve.h"
#include "sstfilter/filter.h"
#include "sstfilter/params.h"

namespace sstfilter {
namespace {

using internal::SizePoint;

// Runs below this many keys are planned on the FPR and size of their own
// filters, not on the large-filter curve: trailers, rounding and the
// small forms of each kind change both.
constexpr uint64_t kSmallRun = uint64_t{1} << 16;

// Small runs of at least this many keys are planned on the curve of
// filters of GridKeys(n) keys (sizes as well as FPRs): whole bytes and
// blocks then move a run's bits per key by up to 2% from 6 bits per key
// up (6% at 1 bit). The level listener plans at every job, and each new
// flush's key count would otherwise cost a new curve (some 250 us).
// Smaller runs are planned on their filters' sizes for exactly n keys.
constexpr uint64_t kGridRun = uint64_t{1} << 12;

// Cap on a level's rewrites per key entering it (TreeRebuilds), and the
// rewrites of a first level with nothing above it: those of a level 10
// times the one above, RocksDB's default ratio.
constexpr double kMaxRewrites = 500;
constexpr double kUnknownRewrites = 5;

// Prices (mu, nu) are bisected on a log scale until their bracket is this
// narrow, a factor of 1 + 1e-6: 28 steps. Choices change at prices much
// further apart (2,100 plans of random trees came out the same as when
// bisected to the last bit of a double, some 54 steps).
constexpr double kLogPriceStep = 1e-6;

FilterSpec KindSpec(const FilterSpec& auto_spec, FilterKind kind, double bits) {
  FilterSpec s;
  s.kind = kind;
  s.bits_per_key = bits;
  s.seed = auto_spec.seed;
  s.keyed = auto_spec.keyed;
  s.salt = auto_spec.salt;
  return s;
}

bool InRange(FilterKind kind, double bits) {
  return bits >= MinBitsPerKey(kind) && bits <= MaxBitsPerKey(kind);
}

// The counts whose FPRs small runs are planned with: n rounded to the
// nearest of 2^(j/8) (within 4.5%), so they are computed once per process.
uint64_t GridKeys(uint64_t n) {
  const double j = std::round(8 * std::log2(static_cast<double>(n)));
  return std::max<uint64_t>(
      1, static_cast<uint64_t>(std::llround(std::exp2(j / 8))));
}

// The FPR of each size of the kind's large-filter curve, for filters of
// GridKeys(n) keys. Cached: thread-safe, at most 3 kinds x 128 counts.
const std::vector<double>& GridFprs(FilterKind kind, uint64_t n) {
  const std::vector<SizePoint>& large = internal::SizeCurve(kind);
  n = GridKeys(n);
  static std::mutex mu;
  static auto* fprs =
      new std::map<std::pair<FilterKind, uint64_t>, std::vector<double>>();
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = fprs->find({kind, n});
    if (it != fprs->end()) return it->second;
  }
  // Computed without the lock: blocked Bloom's take some milliseconds.
  // Neighbouring sizes of a small Bloom filter often round to the same
  // filter (kind, bytes and probes, hence FPR): its FPR, a Poisson sum for
  // blocked Bloom, is then summed once.
  const bool bloom =
      kind == FilterKind::kBloom || kind == FilterKind::kBlockedBloom;
  std::vector<double> out;
  out.reserve(large.size());
  FilterParams last;
  for (const SizePoint& p : large) {
    FilterSpec spec;
    spec.kind = kind;
    spec.bits_per_key = p.spec_bits;
    if (bloom && !out.empty()) {
      const FilterParams f = internal::PlanFilter(spec, n, /*with_fpr=*/false);
      if (f.kind == last.kind && f.filter_bytes == last.filter_bytes &&
          f.num_probes == last.num_probes) {
        out.push_back(last.expected_fpr);
        continue;
      }
    }
    last = internal::PlanFilter(spec, n);
    out.push_back(last.expected_fpr);
  }
  std::lock_guard<std::mutex> lock(mu);
  // std::map never moves its elements: the reference stays valid.
  return fprs->emplace(std::make_pair(kind, n), std::move(out)).first->second;
}

// The kind's curve for a small run of n keys: each size of the large
// curve, with the bits its filter spends for exactly n keys (cheap) and
// its FPR at about n (GridFprs), made convex again.
std::vector<SizePoint> ComputeSmallRunCurve(FilterKind kind, uint64_t n) {
  const std::vector<SizePoint>& large = internal::SizeCurve(kind);
  const std::vector<double>& fprs = GridFprs(kind, n);
  std::vector<SizePoint> points;
  points.reserve(large.size());
  for (size_t i = 0; i < large.size(); i++) {
    FilterSpec spec;
    spec.kind = kind;
    spec.bits_per_key = large[i].spec_bits;
    const FilterParams f = internal::PlanFilter(spec, n, /*with_fpr=*/false);
    points.push_back(
        {large[i].spec_bits,
         8.0 * static_cast<double>(f.filter_bytes) / static_cast<double>(n),
         fprs[i]});
  }
  return internal::LowerHull(std::move(points));
}

// ComputeSmallRunCurve, cached: the level listener plans the same runs
// again after every flush and compaction, and a blocked Bloom curve costs
// some milliseconds (a Poisson sum per size for the rounding of small
// filters). Thread-safe; at most kMaxCached curves, then it starts over.
std::shared_ptr<const std::vector<SizePoint>> SmallRunCurve(FilterKind kind,
                                                            uint64_t n) {
  constexpr size_t kMaxCached = 2048;
  using Key = std::pair<FilterKind, uint64_t>;
  static std::mutex mu;
  static auto* curves =
      new std::map<Key, std::shared_ptr<const std::vector<SizePoint>>>();
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = curves->find({kind, n});
    if (it != curves->end()) return it->second;
  }
  auto curve = std::make_shared<const std::vector<SizePoint>>(
      ComputeSmallRunCurve(kind, n));
  std::lock_guard<std::mutex> lock(mu);
  if (curves->size() >= kMaxCached) curves->clear();
  curves->emplace(Key{kind, n}, curve);
  return curve;
}

// One run's options: per candidate kind, its curve for the run's keys.
struct RunOptions {
  double keys = 0;
  double weight = 0;                                  // rebuilds * keys
  std::vector<const std::vector<SizePoint>*> curves;  // per candidate
};

struct Choice {
  size_t kind = 0;   // index into the candidates
  size_t point = 0;  // index into its curve
  double bits = 0;   // the run's bits at that point
};

class Planner {
 public:
  Planner(const FilterSpec& spec, const std::vector<KindCost>& costs,
          const std::vector<uint64_t>& run_keys,
          const std::vector<double>& rebuilds)
      : costs_(costs), read_ns_(1000 * spec.read_us) {
    for (size_t i = 0; i < run_keys.size(); i++) {
      RunOptions r;
      r.keys = static_cast<double>(run_keys[i]);
      r.weight = rebuilds[i] * r.keys;
      if (run_keys[i] > 0) {
        for (const KindCost& c : costs_) {
          if (run_keys[i] >= kSmallRun) {
            r.curves.push_back(&internal::SizeCurve(c.kind));
            continue;
          }
          // Runs of equal keys (L0 files) share their curves.
          const uint64_t n =
              run_keys[i] >= kGridRun ? GridKeys(run_keys[i]) : run_keys[i];
          auto key = std::make_pair(c.kind, n);
          auto it = small_.find(key);
          if (it == small_.end()) {
            it = small_.emplace(key, SmallRunCurve(c.kind, n)).first;
          }
          r.curves.push_back(it->second.get());
        }
      }
      runs_.push_back(std::move(r));
    }
    // Runs alike in keys, weight and curves (L0 files of one flush size)
    // choose alike: Choose works out the first of them only.
    size_t points = 0;
    for (size_t i = 0; i < runs_.size(); i++) {
      first_point_.push_back(points);
      points += runs_[i].curves.size();
      first_alike_.push_back(i);
      for (size_t j = 0; j < i; j++) {
        if (runs_[j].keys == runs_[i].keys &&
            runs_[j].weight == runs_[i].weight &&
            runs_[j].curves == runs_[i].curves) {
          first_alike_[i] = j;
          break;
        }
      }
    }
  }

  // The cheapest point of each run's curve of each kind at some mu
  // (Choose), run after run, kind after kind.
  using Points = std::vector<size_t>;

  // The choices at prices (mu, nu); memory in bits and build time in ns.
  // If `above` and `below` are given, they are the points at a mu above
  // and one below this one, which bracket this mu's (as mu rises, each
  // curve's cheapest point moves only towards its start). The points
  // chosen go to *points if given.
  std::vector<Choice> Choose(double mu, double nu, double* memory,
                             double* build, const Points* above = nullptr,
                             const Points* below = nullptr,
                             Points* points = nullptr) const {
    std::vector<Choice> out(runs_.size());
    *memory = *build = 0;
    Points own;
    Points* found = points != nullptr ? points : &own;
    found->clear();
    for (size_t i = 0; i < runs_.size(); i++) {
      const RunOptions& r = runs_[i];
      const size_t at = first_point_[i];  // index into the Points
      if (r.curves.empty()) continue;
      const size_t alike = first_alike_[i];
      if (alike != i) {
        for (size_t k = 0; k < r.curves.size(); k++) {
          const size_t p = (*found)[first_point_[alike] + k];
          found->push_back(p);
        }
        out[i] = out[alike];
        *memory += out[i].bits;
        *build += r.weight * costs_[out[i].kind].build_ns;
        continue;
      }
      double best = INFINITY, best_bits = 0;
      for (size_t k = 0; k < r.curves.size(); k++) {
        const std::vector<SizePoint>& curve = *r.curves[k];
        const size_t p = above != nullptr
                             ? Cheapest(curve, r.keys, mu, (*above)[at + k],
                                        (*below)[at + k])
                             : Cheapest(curve, r.keys, mu, 0, curve.size() - 1);
        found->push_back(p);
        const double bits = r.keys * curve[p].real_bits;
        const double cost = costs_[k].query_ns +
                            nu * r.weight * costs_[k].build_ns +
                            read_ns_ * curve[p].fpr + mu * bits;
        // Of equal costs, the smaller filter: memory then falls as mu
        // rises, tie or not.
        if (cost < best || (cost == best && bits < best_bits)) {
          best = cost;
          best_bits = bits;
          out[i] = {k, p, bits};
        }
      }
      *memory += out[i].bits;
      *build += r.weight * costs_[out[i].kind].build_ns;
    }
    return out;
  }

  // The point of a convex curve with the least read_ns * fpr + mu * keys *
  // real_bits: the first whose next segment no longer pays (its slopes
  // rise along the curve), found by bisection in [lo, hi], where it is;
  // of equal costs the smaller.
  size_t Cheapest(const std::vector<SizePoint>& curve, double keys, double mu,
                  size_t lo, size_t hi) const {
    auto pays = [&](size_t j) {
      return read_ns_ * (curve[j + 1].fpr - curve[j].fpr) +
                 mu * keys * (curve[j + 1].real_bits - curve[j].real_bits) <
             0;
    };
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (pays(mid)) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  // The cheapest choices whose memory fits `budget` at build price nu,
  // by bisecting mu over (e^-80, e^80) on a log scale. Each step searches
  // each curve between its points at the bounds.
  std::vector<Choice> FitMemory(double budget, double nu, double* memory,
                                double* build) const {
    double lo = -80, hi = 80;
    Points at_lo, at_hi, at_mid;
    std::vector<Choice> best =
        Choose(std::exp(lo), nu, memory, build, nullptr, nullptr, &at_lo);
    if (*memory <= budget) return best;
    double m, b;
    Choose(std::exp(hi), nu, &m, &b, nullptr, nullptr, &at_hi);
    while (hi - lo > kLogPriceStep) {
      const double mid = (lo + hi) / 2;
      Choose(std::exp(mid), nu, &m, &b, &at_hi, &at_lo, &at_mid);
      if (m <= budget) {
        hi = mid;
        at_hi.swap(at_mid);
      } else {
        lo = mid;
        at_lo.swap(at_mid);
      }
    }
    return Choose(std::exp(hi), nu, memory, build, &at_hi, &at_hi);
  }

  // The spec bits per run: the choices' points, then what `left` bits
  // still allow spent along each run's curve where it saves the most
  // false positives per bit (the run the budget runs out on gets a
  // fraction of its segment).
  std::vector<double> Spend(const std::vector<Choice>& choices,
                            double left) const {
    std::vector<double> bits(runs_.size(), 0);
    std::vector<size_t> at(runs_.size(), 0);
    for (size_t i = 0; i < runs_.size(); i++) {
      if (runs_[i].curves.empty()) continue;
      at[i] = choices[i].point;
      bits[i] = Curve(i, choices[i])[at[i]].spec_bits;
    }
    while (left > 0) {
      size_t best_run = runs_.size();
      double best_gain = 0;
      for (size_t i = 0; i < runs_.size(); i++) {
        if (runs_[i].curves.empty()) continue;
        const std::vector<SizePoint>& c = Curve(i, choices[i]);
        if (at[i] + 1 >= c.size()) continue;
        const double gain =
            (c[at[i]].fpr - c[at[i] + 1].fpr) /
            (runs_[i].keys * (c[at[i] + 1].real_bits - c[at[i]].real_bits));
        if (gain > best_gain) {
          best_gain = gain;
          best_run = i;
        }
      }
      if (best_run == runs_.size()) break;
      const size_t i = best_run;
      const std::vector<SizePoint>& c = Curve(i, choices[i]);
      const SizePoint& a = c[at[i]];
      const SizePoint& b = c[at[i] + 1];
      const double cost = runs_[i].keys * (b.real_bits - a.real_bits);
      if (cost <= left) {
        left -= cost;
        at[i]++;
        bits[i] = b.spec_bits;
        continue;
      }
      bits[i] = a.spec_bits + left / cost * (b.spec_bits - a.spec_bits);
      left = 0;
    }
    return bits;
  }

  const std::vector<SizePoint>& Curve(size_t run, const Choice& c) const {
    return *runs_[run].curves[c.kind];
  }

 private:
  const std::vector<KindCost>& costs_;
  const double read_ns_;
  std::vector<RunOptions> runs_;
  // Per run: the first run alike (itself if none), and the index in the
  // Points of its first curve's point.
  std::vector<size_t> first_alike_;
  std::vector<size_t> first_point_;
  std::map<std::pair<FilterKind, uint64_t>,
           std::shared_ptr<const std::vector<SizePoint>>>
      small_;
};

}  // namespace

const std::vector<KindCost>& DefaultKindCosts() {
  // CPU ns per key at 10^6 keys through RocksDB's FilterBitsBuilder and
  // FilterBitsReader (bench/rocksdb_bench), the median of three runs'
  // medians of five repetitions (docs/LEVEL_SIZING.md).
  static const std::vector<KindCost> costs = {
      {FilterKind::kBlockedBloom, 12.6, 13.5},
      {FilterKind::kBloom, 12.7, 17.4},
      {FilterKind::kRibbon, 34.4, 81.8},
  };
  return costs;
}

namespace {

// `c` with the spec's own cost for its kind where the spec sets one.
KindCost WithSpecCost(KindCost c, const FilterSpec& spec) {
  double q = 0, b = 0;
  switch (c.kind) {
    case FilterKind::kBloom:
      q = spec.bloom_query_ns, b = spec.bloom_build_ns;
      break;
    case FilterKind::kBlockedBloom:
      q = spec.blocked_bloom_query_ns, b = spec.blocked_bloom_build_ns;
      break;
    case FilterKind::kRibbon:
      q = spec.ribbon_query_ns, b = spec.ribbon_build_ns;
      break;
    default:
      break;
  }
  if (q > 0) c.query_ns = q;
  if (b > 0) c.build_ns = b;
  return c;
}

}  // namespace

std::vector<double> TreeRebuilds(const std::vector<uint64_t>& run_keys,
                                 size_t l0_runs) {
  const size_t n = run_keys.size();
  l0_runs = std::min(l0_runs, n);
  double all = 0, l0 = 0;
  for (size_t i = 0; i < n; i++) {
    all += static_cast<double>(run_keys[i]);
    if (i < l0_runs) l0 += static_cast<double>(run_keys[i]);
  }
  std::vector<double> w(n, 0);
  for (size_t i = 0; i < l0_runs; i++) {
    if (run_keys[i] > 0) w[i] = all / l0;
  }
  // Levels from the top down: keys at and below each, and the level above.
  double below = 0;
  std::vector<double> at_and_below(n, 0);
  for (size_t i = n; i-- > l0_runs;) {
    below += static_cast<double>(run_keys[i]);
    at_and_below[i] = below;
  }
  double above = l0;
  for (size_t i = l0_runs; i < n; i++) {
    const double keys = static_cast<double>(run_keys[i]);
    if (keys == 0) continue;
    const double rewrites = above > 0
                                ? std::min(keys / (2 * above), kMaxRewrites)
                                : kUnknownRewrites;
    w[i] = at_and_below[i] / keys * (1 + rewrites);
    above = keys;
  }
  return w;
}

Status PlanFilterCosts(const FilterSpec& spec,
                       const std::vector<uint64_t>& run_keys,
                       const std::vector<double>& rebuilds, CostPlan* out,
                       const std::vector<KindCost>& costs) {
  if (!spec.auto_kind) {
    return Status::InvalidArgument("spec \"" + spec.ToString() +
                                   "\" is not an auto spec");
  }
  Status s = spec.Validate();
  if (!s.ok()) return s;
  if (run_keys.empty()) {
    return Status::InvalidArgument("a tree needs at least one run of keys");
  }
  if (rebuilds.size() != run_keys.size()) {
    return Status::InvalidArgument(
        std::to_string(run_keys.size()) + " runs but " +
        std::to_string(rebuilds.size()) + " rebuild weights");
  }
  // Costs given here win; else the defaults, with the spec's own costs.
  std::vector<KindCost> candidates = costs;
  if (candidates.empty()) {
    for (const KindCost& c : DefaultKindCosts()) {
      candidates.push_back(WithSpecCost(c, spec));
    }
  }
  double blocked_build_ns = -1;
  for (const KindCost& c : candidates) {
    FilterSpec k;
    k.kind = c.kind;
    if (c.kind == FilterKind::kCuckoo || !k.Validate().ok() ||
        !(c.query_ns >= 0) || !(c.build_ns >= 0)) {
      return Status::InvalidArgument(
          std::string("auto cannot weigh kind ") + FilterKindName(c.kind) +
          " (a candidate is blocked_bloom, bloom or ribbon, with costs >= 0)");
    }
    if (c.kind == FilterKind::kBlockedBloom) blocked_build_ns = c.build_ns;
  }
  if (blocked_build_ns < 0) {
    return Status::InvalidArgument(
        "auto's candidates must include blocked_bloom, the measure of its "
        "build budget");
  }
  double total_keys = 0, baseline = 0;
  for (size_t i = 0; i < run_keys.size(); i++) {
    if (!(rebuilds[i] >= 0)) {
      return Status::InvalidArgument("rebuild weights must be >= 0");
    }
    total_keys += static_cast<double>(run_keys[i]);
    baseline +=
        rebuilds[i] * static_cast<double>(run_keys[i]) * blocked_build_ns;
  }
  const double budget = spec.bits_per_key * total_keys;
  const double build_budget = spec.build_x * baseline;

  Planner planner(spec, candidates, run_keys, rebuilds);
  double memory = 0, build = 0;
  std::vector<Choice> choices = planner.FitMemory(budget, 0, &memory, &build);
  if (build > build_budget * (1 + 1e-12)) {
    // Price build time: the smallest nu in (e^-80, e^80) that fits.
    double lo = -80, hi = 80;
    while (hi - lo > kLogPriceStep) {
      const double mid = (lo + hi) / 2;
      double m, b;
      planner.FitMemory(budget, std::exp(mid), &m, &b);
      if (b <= build_budget * (1 + 1e-12)) {
        hi = mid;
      } else {
        lo = mid;
      }
    }
    choices = planner.FitMemory(budget, std::exp(hi), &memory, &build);
  }
  const std::vector<double> bits =
      planner.Spend(choices, std::max(0.0, budget - memory));

  CostPlan plan;
  const size_t n = run_keys.size();
  plan.kinds.assign(n, FilterKind::kEmpty);
  plan.bits_per_key.assign(n, 0);
  plan.fpr.assign(n, 0);
  plan.query_ns.assign(n, 0);
  plan.build_ns.assign(n, 0);
  plan.budget_bits = budget;
  plan.blocked_bloom_build_ns = baseline;
  for (size_t i = 0; i < n; i++) {
    if (run_keys[i] == 0) continue;
    const KindCost& c = candidates[choices[i].kind];
    // Interpolated bits stay within the kind's range (between two points
    // of its curve).
    const FilterSpec k = KindSpec(spec, c.kind, bits[i]);
    const FilterParams p = internal::PlanFilter(k, run_keys[i]);
    plan.kinds[i] = c.kind;
    plan.bits_per_key[i] = bits[i];
    plan.fpr[i] = p.expected_fpr;
    plan.query_ns[i] = c.query_ns;
    plan.build_ns[i] = c.build_ns;
    plan.expected_false_positives += p.expected_fpr;
    plan.expected_query_ns += c.query_ns;
    plan.build_ns_total +=
        rebuilds[i] * static_cast<double>(run_keys[i]) * c.build_ns;
    plan.total_bits += 8.0 * static_cast<double>(p.filter_bytes);
  }
  plan.expected_cost_ns = plan.expected_query_ns +
                          1000 * spec.read_us * plan.expected_false_positives;
  *out = std::move(plan);
  return Status::OK();
}

FilterSpec ChooseKindForKeys(const FilterSpec& spec, uint64_t num_keys) {
  const std::vector<KindCost>& defaults = DefaultKindCosts();
  double blocked_build_ns = 0;
  for (const KindCost& d : defaults) {
    const KindCost c = WithSpecCost(d, spec);
    if (c.kind == FilterKind::kBlockedBloom) blocked_build_ns = c.build_ns;
  }
  FilterSpec best =
      KindSpec(spec, FilterKind::kBlockedBloom, spec.bits_per_key);
  if (num_keys == 0) return best;  // an empty filter whatever the kind
  double best_cost = INFINITY;
  for (const KindCost& d : defaults) {
    const KindCost c = WithSpecCost(d, spec);
    if (!InRange(c.kind, spec.bits_per_key) ||
        c.build_ns > spec.build_x * blocked_build_ns) {
      continue;
    }
    const FilterSpec k = KindSpec(spec, c.kind, spec.bits_per_key);
    const double cost =
        c.query_ns +
        1000 * spec.read_us * internal::PlanFilter(k, num_keys).expected_fpr;
    if (cost < best_cost) {
      best_cost = cost;
      best = k;
    }
  }
  return best;
}

namespace internal {
namespace {

class AutoBuilder final : public HashListBuilder {
 public:
  AutoBuilder(const FilterSpec& spec, const FilterSecret* secret)
      : HashListBuilder(spec), secret_(secret) {}

  void Finish(std::string* dst) override {
    const size_t start = dst->size();
    FilterSpec k = Choose(hashes_.size());
    k.seed = seed();
    k.salt = false;  // this builder draws the seeds
    std::unique_ptr<FilterBuilder>& inner = inner_[Slot(k.kind)];
    if (inner == nullptr || inner->spec() != k) {
      // k is valid (its bits within the kind's range), and keyed only
      // if this builder was given its secret.
      if (!NewFilterBuilder(k, &inner, secret_).ok()) {
        inner.reset();
        dst->push_back('\0');  // "may match": never a false negative
        hashes_.clear();
        return;
      }
    }
    // The chosen builder gets the hashes, builds, and empties them; they
    // come back empty with their memory.
    auto* h = static_cast<HashListBuilder*>(inner.get());
    h->SwapHashes(&hashes_);
    inner->Finish(dst);
    h->SwapHashes(&hashes_);
    EndFilter(start, dst);  // the key id again (the same), the next seed
  }

 private:
  static size_t Slot(FilterKind kind) {
    return kind == FilterKind::kBloom ? 1 : kind == FilterKind::kRibbon ? 2 : 0;
  }

  // ChooseKindForKeys, remembered for the last few small counts (LevelDB
  // writes filters of tens of keys, one per 2 KiB of data).
  FilterSpec Choose(uint64_t n) {
    if (n >= kCachedCounts) return ChooseKindForKeys(spec(), n);
    if (cache_ == nullptr) cache_.reset(new Cached[kCachedCounts]);
    Cached& c = cache_[n];
    if (!c.set) {
      c.spec = ChooseKindForKeys(spec(), n);
      c.set = true;
    }
    return c.spec;
  }

  static constexpr uint64_t kCachedCounts = 256;
  struct Cached {
    bool set = false;
    FilterSpec spec;
  };
  const FilterSecret* const secret_;
  std::unique_ptr<FilterBuilder> inner_[3];
  std::unique_ptr<Cached[]> cache_;  // made at the first small count
};

}  // namespace

std::unique_ptr<FilterBuilder> NewAutoBuilder(const FilterSpec& spec,
                                              const FilterSecret* secret) {
  return std::make_unique<AutoBuilder>(spec, secret);
}

}  // namespace internal
}  // namespace sstfilter
