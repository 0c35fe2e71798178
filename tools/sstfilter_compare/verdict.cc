// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include "tools/sstfilter_compare/verdict.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace sstfilter {
namespace compare {
namespace {

const PhaseResult* Absent(const PolicyRun& r) {
  const PhaseResult* p = r.Find(Phase::kAbsent);
  return p != nullptr && p->ops > 0 ? p : nullptr;
}

bool IsBuiltin(const PolicyRun& r) {
  return r.policy.family != Family::kNone &&
         r.policy.family != Family::kSstfilter;
}

// Ours over the rival in absent-key reads per Get: 1 if neither read a
// block, infinite if only ours did.
double Score(const PolicyRun& ours, const PolicyRun& rival) {
  const double a = Absent(ours)->reads_per_op();
  const double b = Absent(rival)->reads_per_op();
  if (b > 0) return a / b;
  return a > 0 ? INFINITY : 1;
}

struct Pair {
  const PolicyRun* ours;   // an sstfilter policy
  const PolicyRun* rival;  // a built-in at its memory
};

// The X@Y pairs of `engine` with one side ours and the other a built-in,
// both with an absent phase.
std::vector<Pair> EqualMemoryPairs(const Report& report,
                                   const std::string& engine) {
  std::vector<Pair> pairs;
  for (const PolicyRun& x : report.runs) {
    if (x.skipped || !x.sized || x.engine != engine) continue;
    const PolicyRun* y = report.FindRun(engine, x.reference);
    if (y == nullptr) continue;
    const bool x_ours = x.policy.family == Family::kSstfilter;
    const Pair p = {x_ours ? &x : y, x_ours ? y : &x};
    if (p.ours->policy.family == Family::kSstfilter && IsBuiltin(*p.rival) &&
        Absent(*p.ours) != nullptr && Absent(*p.rival) != nullptr) {
      pairs.push_back(p);
    }
  }
  return pairs;
}

// For every policy of ours in a pair, the strongest built-in at its memory
// (the fewest absent-key reads); then the policy whose reads are the lowest
// multiple of its rival's (the first of equals).
void ChooseBest(const Report& report, const std::string& engine, Verdict* v) {
  const std::vector<Pair> pairs = EqualMemoryPairs(report, engine);
  double best = INFINITY;
  for (const Pair& p : pairs) {
    const PolicyRun* rival = p.rival;
    for (const Pair& q : pairs) {
      if (q.ours == p.ours &&
          Score(*p.ours, *q.rival) > Score(*p.ours, *rival)) {
        rival = q.rival;
      }
    }
    const double score = Score(*p.ours, *rival);
    if (v->ours == nullptr || score < best) {
      best = score;
      v->ours = p.ours;
      v->rival = rival;
    }
  }
}

std::string EngineTitle(const std::string& engine) {
  return engine == "rocksdb"   ? "RocksDB"
         : engine == "leveldb" ? "LevelDB"
                               : engine;
}

// "ribbon:10:by_level", or "ribbon@leveldb:bloom:10 (ribbon:9.7)" when the
// tool chose the size.
std::string Named(const PolicyRun& r) {
  const std::string filter = r.policy.ToString();
  return filter == r.label ? r.label : r.label + " (" + filter + ")";
}

std::string Fixed(double v, int places) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", places, v);
  return buf;
}

// Three significant digits: "0.123", "0.000541".
std::string Significant(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

// Ours over the rival's, or -1 if the rival's is not positive.
double CostRatio(double ours, double rival) {
  return rival > 0 ? ours / rival : -1;
}

std::string RatioText(double r) { return r < 0 ? "-" : Fixed(r, 2) + "x"; }

// "; cost beside RocksDB's Ribbon: absent-Get latency p50 1.05x, p99
// 1.12x, filter build 1.62x (0.2 s against 0.123 s in the load)": what ours
// costs beside the rival; nothing if no cost was measured.
std::string Cost(const Verdict& v) {
  if (v.p50_ratio < 0 && v.p99_ratio < 0 && v.build_ratio < 0) return "";
  return "; cost beside " + v.rival->policy.BuiltinName() +
         ": absent-Get latency p50 " + RatioText(v.p50_ratio) + ", p99 " +
         RatioText(v.p99_ratio) + ", filter build " + RatioText(v.build_ratio) +
         " (" + Significant(v.ours->build.filter_build_seconds) +
         " s against " + Significant(v.rival->build.filter_build_seconds) +
         " s in the load)";
}

// "; 1.20x and 4.73x the information bound" (bound.h), or nothing if
// either is unknown.
std::string VsBound(const Verdict& v, uint64_t keys) {
  const double a = v.ours->ratio_vs_bound(keys);
  const double b = v.rival->ratio_vs_bound(keys);
  if (a < 0 || b < 0) return "";
  return "; " + Fixed(a, 2) + "x and " + Fixed(b, 2) +
         "x the information bound";
}

// " at equal memory (<prefix>filter bytes: RocksDB's Ribbon's 1.008x ours;
// 150 against 345 block reads in 50000 absent Gets each; 1.20x and 4.73x
// the information bound)".
std::string AtEqualMemory(const Verdict& v, uint64_t keys,
                          const std::string& prefix) {
  const PhaseResult& a = *Absent(*v.ours);
  const PhaseResult& b = *Absent(*v.rival);
  const std::string gets = a.ops == b.ops
                               ? std::to_string(a.ops) + " absent Gets each"
                               : std::to_string(a.ops) + " and " +
                                     std::to_string(b.ops) + " absent Gets";
  return " at equal memory (" + prefix +
         "filter bytes: " + v.rival->policy.BuiltinName() + "'s " +
         Fixed(v.bytes_ratio, 3) + "x ours; " + std::to_string(a.io.reads) +
         " against " + std::to_string(b.io.reads) + " block reads in " + gets +
         VsBound(v, keys) + ")";
}

std::string Line(const Verdict& v, uint64_t keys) {
  const std::string title = EngineTitle(v.engine) + ": ";
  if (v.ours == nullptr) {
    return title +
           "no verdict: no sstfilter policy ran beside a built-in filter at "
           "equal memory (an X@Y entry makes such a pair: " +
           (v.engine == "leveldb" ? "ribbon@leveldb:bloom:10"
                                  : "rocksdb:ribbon@ribbon:10:by_level") +
           ")";
  }
  const std::string rival = v.rival->policy.BuiltinName();
  const std::string rival_filter = v.rival->policy.ToString();
  const PhaseResult& a = *Absent(*v.ours);
  const PhaseResult& b = *Absent(*v.rival);
  if (a.io.reads == b.io.reads && a.ops == b.ops) {
    return title + "tie: " + Named(*v.ours) + " and " + rival + " (" +
           rival_filter + ") read as often for absent keys" +
           AtEqualMemory(v, keys, "") + Cost(v);
  }
  if (v.ratio >= 0 && v.ratio < 1) {
    return title + Named(*v.ours) + " reads " + Fixed(v.ratio, 2) + "x " +
           rival + "'s absent-key reads" +
           AtEqualMemory(v, keys, rival_filter + "; ") + Cost(v);
  }
  return title + rival + " wins: " + rival_filter + " reads " +
         Fixed(b.reads_per_op() / a.reads_per_op(), 2) +
         "x the absent-key reads of " + Named(*v.ours) + ", our best," +
         AtEqualMemory(v, keys, "") + Cost(v);
}

}  // namespace

std::vector<Verdict> Verdicts(const Report& report) {
  std::vector<Verdict> out;
  for (const EngineInfo& e : report.engines) {
    Verdict v;
    v.engine = e.name;
    ChooseBest(report, e.name, &v);
    if (v.ours != nullptr) {
      const double s = Score(*v.ours, *v.rival);
      v.ratio = std::isinf(s) ? -1 : s;
      v.p50_ratio =
          CostRatio(Absent(*v.ours)->p50_us, Absent(*v.rival)->p50_us);
      v.p99_ratio =
          CostRatio(Absent(*v.ours)->p99_us, Absent(*v.rival)->p99_us);
      v.build_ratio = CostRatio(v.ours->build.filter_build_seconds,
                                v.rival->build.filter_build_seconds);
      v.bytes_ratio = v.ours->build.filter_bytes == 0
                          ? 0
                          : static_cast<double>(v.rival->build.filter_bytes) /
                                static_cast<double>(v.ours->build.filter_bytes);
    }
    v.text = Line(v, report.num_keys);
    out.push_back(v);
  }
  return out;
}

}  // namespace compare
}  // namespace sstfilter
