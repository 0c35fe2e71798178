// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include "tools/sstfilter_compare/report.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tools/sstfilter_compare/verdict.h"

namespace sstfilter {
namespace compare {
namespace {

std::string Printf(const char* format, ...)
    __attribute__((format(printf, 1, 2)));
std::string Printf(const char* format, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, format);
  std::vsnprintf(buf, sizeof(buf), format, ap);
  va_end(ap);
  return buf;
}

// Columns padded to their widest cell; numbers right-aligned.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) {
    rows_.push_back(std::move(header));
  }
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  size_t size() const { return rows_.size() - 1; }

  std::string Render() const {
    std::vector<size_t> width;
    std::vector<bool> numeric;
    for (const auto& row : rows_) {
      for (size_t c = 0; c < row.size(); c++) {
        if (c >= width.size()) {
          width.push_back(0);
          numeric.push_back(true);
        }
        width[c] = std::max(width[c], row[c].size());
      }
    }
    for (size_t r = 1; r < rows_.size(); r++) {
      for (size_t c = 0; c < rows_[r].size(); c++) {
        const std::string& s = rows_[r][c];
        if (!s.empty() && s != "-" &&
            s.find_first_not_of("0123456789.-+e%x") != std::string::npos) {
          numeric[c] = false;
        }
      }
    }
    std::string out;
    for (const auto& row : rows_) {
      std::string line;
      for (size_t c = 0; c < row.size(); c++) {
        const size_t pad = width[c] - row[c].size();
        if (c > 0) line += "  ";
        if (numeric[c]) line.append(pad, ' ');
        line += row[c];
        if (!numeric[c] && c + 1 < row.size()) line.append(pad, ' ');
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

std::string Tree(const BuildResult& b) {
  std::string s;
  size_t last = 0;
  for (size_t l = 0; l < b.files_per_level.size(); l++) {
    if (b.files_per_level[l] > 0) last = l + 1;
  }
  for (size_t l = 0; l < last; l++) {
    if (!s.empty()) s += ' ';
    s += "L" + std::to_string(l) + ":" + std::to_string(b.files_per_level[l]);
  }
  return s.empty() ? "-" : s;
}

// Reads per op of `run` relative to the engine's baseline, or -1.
double RatioVsBase(const Report& report, const PolicyRun& run,
                   const PhaseResult& phase) {
  const PolicyRun* base = report.Baseline(run.engine);
  if (base == nullptr) return -1;
  const PhaseResult* b = base->Find(phase.phase);
  if (b == nullptr || b->reads_per_op() <= 0) return -1;
  return phase.reads_per_op() / b->reads_per_op();
}

// Reads per op of `x` relative to `y` in phase p, or -1.
double Ratio(const PolicyRun& x, const PolicyRun& y, Phase p) {
  const PhaseResult* a = x.Find(p);
  const PhaseResult* b = y.Find(p);
  if (a == nullptr || b == nullptr || b->reads_per_op() <= 0) return -1;
  return a->reads_per_op() / b->reads_per_op();
}

// The absent phase's reads per op over the information bound of the run's
// tree (bound.h), or -1 (another phase, or unknown).
double RatioVsBound(const Report& report, const PolicyRun& run,
                    const PhaseResult& phase) {
  return phase.phase == Phase::kAbsent ? run.ratio_vs_bound(report.num_keys)
                                       : -1;
}

std::string OrDash(double v, const char* format) {
  return v < 0 ? "-" : Printf(format, v);
}

// Seconds, keys and filters of a run's filter building for tables made by
// `reason` ("flush", "compaction", "other").
BuildSlice SumOf(const BuildResult& b, const std::string& reason) {
  BuildSlice sum;
  sum.reason = reason;
  for (const BuildSlice& s : b.build_split) {
    if (s.reason != reason) continue;
    sum.nanos += s.nanos;
    sum.keys += s.keys;
    sum.filters += s.filters;
  }
  return sum;
}

// The predicted build seconds of a run (--predict_build), or -1.
double PredictedSeconds(const BuildResult& b) {
  double sum = 0;
  for (const BuildSlice& s : b.build_split) {
    if (s.predicted_seconds() < 0) return -1;
    sum += s.predicted_seconds();
  }
  return b.build_split.empty() ? -1 : sum;
}

double NanosPerKey(const BuildSlice& s) {
  return s.keys == 0
             ? -1
             : static_cast<double>(s.nanos) / static_cast<double>(s.keys);
}

// "flush", "L2" (a compaction's output level, "L?" if not known), "other".
std::string SliceName(const BuildSlice& s) {
  if (s.reason != "compaction") return s.reason;
  return s.level < 0 ? "L?" : "L" + std::to_string(s.level);
}

// "flush:0.031 L1:0.010 L2:0.044" with `format` for the seconds, or "-".
std::string SplitText(const BuildResult& b, const char* format) {
  std::string out;
  for (const BuildSlice& s : b.build_split) {
    out += (out.empty() ? "" : " ") + SliceName(s) + ":" +
           Printf(format, s.seconds());
  }
  return out.empty() ? "-" : out;
}

// --- CSV and JSON values ---

// Members in the order written.
using Json = nlohmann::ordered_json;

std::string Num(double v) { return Printf("%.10g", v); }
std::string Num(uint64_t v) {
  return Printf("%llu", static_cast<unsigned long long>(v));
}
// Unknown values (< 0) are empty in CSV, null in JSON.
std::string CsvMaybe(double v) { return v < 0 ? "" : Num(v); }
Json JsonMaybe(double v) { return v < 0 ? Json(nullptr) : Json(v); }

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

namespace {

// The lookups table, one row per phase of every run.
std::string LookupsText(const Report& report) {
  TextTable lookups({"engine", "policy", "phase", "ops", "probes/op", "FPR %",
                     "reads/op", "x base", "x bound", "bytes/op", "kops/s",
                     "p50 us", "p99 us"});
  for (const PolicyRun& r : report.runs) {
    if (r.skipped) continue;
    for (const PhaseResult& p : r.phases) {
      const double fpr = p.fpr();
      lookups.Add({r.engine, r.label, PhaseName(p.phase),
                   Num(p.ops) + (p.time_capped ? "+" : ""),
                   Printf("%.3f", p.probes_per_op()),
                   fpr < 0 ? "-" : Printf("%.4f", 100 * fpr),
                   Printf("%.4f", p.reads_per_op()),
                   OrDash(RatioVsBase(report, r, p), "%.3f"),
                   OrDash(RatioVsBound(report, r, p), "%.2f"),
                   Printf("%.0f", p.bytes_per_op()),
                   Printf("%.1f", p.ops_per_second() / 1000),
                   Printf("%.1f", p.p50_us), Printf("%.1f", p.p99_us)});
    }
  }
  std::string bases;
  for (const EngineInfo& e : report.engines) {
    const PolicyRun* b = report.Baseline(e.name);
    if (b != nullptr) bases += (bases.empty() ? "" : ", ") + b->label;
  }
  std::string out =
      "\nLookups (ops: keys looked up, '+' if --phase_seconds stopped the "
      "phase early; probes: filter queries; reads: table-file reads, i.e. "
      "data blocks; x base: reads/op over those of " +
      (bases.empty() ? std::string("(no baseline ran)") : bases) +
      " in the same phase; x bound: absent reads/op over the information "
      "bound 2^-(b - H) for the tree at the filter bits/key b, H the entropy "
      "of its sorted runs' key shares, 1.00 at the limit; latency per Get or "
      "MultiGet call)\n";
  out += lookups.Render();
  return out;
}

// Where filter building went: flushes and compactions (by output level),
// or "" if no run built a filter.
std::string BuildText(const Report& report) {
  bool predicted = false;
  for (const PolicyRun& r : report.runs) {
    predicted = predicted || PredictedSeconds(r.build) >= 0;
  }
  std::vector<std::string> header = {
      "engine",  "policy",       "build s",      "flush s",
      "flush %", "compaction s", "flush ns/key", "compaction ns/key"};
  if (predicted) {
    header.push_back("predicted s");
    header.push_back("predicted x");
  }
  header.push_back("plan s");
  header.push_back("by table (s)");
  TextTable build(header);
  for (const PolicyRun& r : report.runs) {
    if (r.skipped || r.build.build_split.empty()) continue;
    const BuildSlice flush = SumOf(r.build, "flush");
    const BuildSlice compaction = SumOf(r.build, "compaction");
    const double all = r.build.filter_build_seconds;
    std::vector<std::string> row = {
        r.engine,
        r.label,
        Printf("%.3f", all),
        Printf("%.3f", flush.seconds()),
        Printf("%.1f", all > 0 ? 100 * flush.seconds() / all : 0.0),
        Printf("%.3f", compaction.seconds()),
        OrDash(NanosPerKey(flush), "%.1f"),
        OrDash(NanosPerKey(compaction), "%.1f")};
    if (predicted) {
      const double p = PredictedSeconds(r.build);
      row.push_back(OrDash(p, "%.3f"));
      row.push_back(OrDash(p < 0 || all <= 0 ? -1 : p / all, "%.2f"));
    }
    row.push_back(OrDash(r.build.listener_seconds, "%.3f"));
    row.push_back(SplitText(r.build, "%.3f"));
    build.Add(row);
  }
  if (build.size() == 0) return "";
  return "\nFilter build (seconds inside the filter builders, by what made "
         "the table: flushes, or compactions by the level they write, L<n>; "
         "ns/key: per key the filters were built for, a key counted each "
         "time it is rebuilt" +
         std::string(predicted
                         ? "; predicted: the keys of each flush and level x "
                           "the ns/key of the same builders outside the "
                           "database, x: over the measured"
                         : "") +
         "; plan s: inside the level listener of a by_level or auto policy, "
         "planning the tree's filters, also in RocksDB's background threads "
         "and not in build s)\n" +
         build.Render();
}

// The filter bits per key each level of a run's tree got, or "" if no run
// reported its tables.
std::string LevelsText(const Report& report) {
  TextTable levels(
      {"engine", "policy", "level", "files", "keys %", "filter bits/key"});
  for (const PolicyRun& r : report.runs) {
    if (r.skipped || r.build.tables.empty()) continue;
    std::map<int, std::vector<const FilterTable*>> by_level;
    uint64_t all = 0;
    for (const FilterTable& t : r.build.tables) {
      by_level[t.level].push_back(&t);
      all += t.keys;
    }
    for (const auto& [level, tables] : by_level) {
      uint64_t keys = 0, bytes = 0;
      for (const FilterTable* t : tables) {
        keys += t->keys;
        bytes += t->filter_bytes;
      }
      levels.Add({r.engine, r.label, "L" + std::to_string(level),
                  std::to_string(tables.size()),
                  Printf("%.1f", all ? 100.0 * keys / all : 0.0),
                  Printf("%.2f", keys ? 8.0 * bytes / keys : 0.0)});
    }
  }
  if (levels.size() == 0) return "";
  return "\nLevels (keys %: share of the tree's entries; filter bits/key: "
         "filter bytes x 8 / entries of the level)\n" +
         levels.Render();
}

// X@Y beside Y, or "" if no X@Y ran.
std::string EqualMemoryText(const Report& report) {
  const uint64_t n = report.num_keys;
  TextTable pairs({"engine", "policy", "filter", "bits/key", "reference",
                   "ref bits/key", "bytes x", "absent x", "neighbour x",
                   "present x"});
  for (const PolicyRun& r : report.runs) {
    if (r.skipped || !r.sized) continue;
    const PolicyRun* y = report.FindRun(r.engine, r.reference);
    if (y == nullptr) continue;
    pairs.Add({r.engine, r.label, r.policy.ToString(),
               Printf("%.2f", r.bits_per_key_disk(n)), y->label,
               Printf("%.2f", y->bits_per_key_disk(n)),
               OrDash(y->build.filter_bytes == 0
                          ? -1
                          : static_cast<double>(r.build.filter_bytes) /
                                static_cast<double>(y->build.filter_bytes),
                      "%.4f"),
               OrDash(Ratio(r, *y, Phase::kAbsent), "%.3f"),
               OrDash(Ratio(r, *y, Phase::kNeighbour), "%.3f"),
               OrDash(Ratio(r, *y, Phase::kPresent), "%.3f")});
  }
  if (pairs.size() == 0) return "";
  return "\nEqual memory (X@Y: X's bits/key chosen so its filters take at "
         "most Y's bytes; bytes x: X's filter bytes over Y's; x: reads/op "
         "of X over those of Y)\n" +
         pairs.Render();
}

}  // namespace

std::string FormatText(const Report& report) {
  std::string out;
  for (const auto& [key, value] : report.header) {
    out += key + ": " + value + "\n";
  }
  for (const EngineInfo& e : report.engines) {
    out += e.name + " " + e.version + ": " + e.io_mode + "\n";
  }
  const uint64_t n = report.num_keys;

  TextTable filters({"engine", "policy", "filter", "bits/key", "mem bits/key",
                     "keys/filter", "load s", "build s", "build %", "tree"});
  for (const PolicyRun& r : report.runs) {
    if (r.skipped) continue;
    filters.Add(
        {r.engine, r.label, r.policy.ToString(),
         Printf("%.2f", r.bits_per_key_disk(n)),
         OrDash(r.bits_per_key_memory(n), "%.2f"),
         r.build.num_filters ? Printf("%.1f", r.keys_per_filter(n)) : "-",
         Printf("%.1f", r.build.load_seconds),
         Printf("%.2f", r.build.filter_build_seconds),
         Printf("%.1f", 100 * r.build_share()), Tree(r.build)});
  }
  out +=
      "\nFilters (bits/key: filter blocks on disk per key loaded; mem: "
      "held in memory by the open DB; build %: share of the load time "
      "spent building filters)\n";
  out += filters.Render();

  out += BuildText(report);
  out += LevelsText(report);
  out += LookupsText(report);
  out += EqualMemoryText(report);

  TextTable skipped({"engine", "policy", "reason"});
  for (const PolicyRun& r : report.runs) {
    if (r.skipped) skipped.Add({r.engine, r.label, r.skip_reason});
  }
  if (skipped.size() > 0) {
    out += "\nSkipped\n" + skipped.Render();
  }
  if (!report.notes.empty()) {
    out += "\nNotes\n";
    for (const std::string& s : report.notes) out += "- " + s + "\n";
  }
  out +=
      "\nVerdict (per engine: our policy with the lowest absent-key reads "
      "relative to the strongest built-in filter given the same filter "
      "bytes, X@Y; its cost beside that filter: absent-Get latency and "
      "filter build time, ours over the built-in's)\n";
  for (const Verdict& v : Verdicts(report)) out += v.text + "\n";
  return out;
}

std::string FormatCsv(const Report& report) {
  const uint64_t n = report.num_keys;
  std::string out =
      "engine,policy,filter,family,reference,implicit,bits_per_key_disk,"
      "bits_per_key_memory,keys_per_filter,filter_bytes,num_filters,load_s,"
      "filter_build_s,build_share,filter_build_flush_s,"
      "filter_build_compaction_s,filter_build_other_s,filter_build_by_table,"
      "filter_build_predicted_s,"
      "tree,phase,ops,calls,found,seconds,"
      "time_capped,probes_per_op,fpr,reads_per_op,ratio_vs_base,"
      "ratio_vs_bound,bytes_per_op,ops_per_s,p50_us,p99_us\n";
  for (const PolicyRun& r : report.runs) {
    if (r.skipped) continue;
    for (const PhaseResult& p : r.phases) {
      const std::vector<std::string> fields = {
          r.engine,
          r.label,
          r.policy.ToString(),
          r.policy.FamilyName(),
          r.reference,
          r.implicit ? "1" : "0",
          Num(r.bits_per_key_disk(n)),
          CsvMaybe(r.bits_per_key_memory(n)),
          Num(r.keys_per_filter(n)),
          Num(r.build.filter_block_bytes),
          Num(r.build.num_filters),
          Num(r.build.load_seconds),
          Num(r.build.filter_build_seconds),
          Num(r.build_share()),
          Num(SumOf(r.build, "flush").seconds()),
          Num(SumOf(r.build, "compaction").seconds()),
          Num(SumOf(r.build, "other").seconds()),
          SplitText(r.build, "%.10g"),
          CsvMaybe(PredictedSeconds(r.build)),
          Tree(r.build),
          PhaseName(p.phase),
          Num(p.ops),
          Num(p.calls),
          Num(p.found),
          Num(p.seconds),
          p.time_capped ? "1" : "0",
          Num(p.probes_per_op()),
          CsvMaybe(p.fpr()),
          Num(p.reads_per_op()),
          CsvMaybe(RatioVsBase(report, r, p)),
          CsvMaybe(RatioVsBound(report, r, p)),
          Num(p.bytes_per_op()),
          Num(p.ops_per_second()),
          Num(p.p50_us),
          Num(p.p99_us),
      };
      for (size_t i = 0; i < fields.size(); i++) {
        out += (i ? "," : "") + CsvField(fields[i]);
      }
      out += "\n";
    }
  }
  return out;
}

namespace {

// The "build" object of one run.
Json BuildJson(const PolicyRun& r, uint64_t n) {
  const BuildResult& b = r.build;
  // Every table: [level, entries, filter bytes].
  Json tables = Json::array();
  for (const FilterTable& t : b.tables) {
    tables.push_back({t.level, t.keys, t.filter_bytes});
  }
  // Filter building by what made the table.
  Json split = Json::array();
  for (const BuildSlice& s : b.build_split) {
    split.push_back(
        {{"reason", s.reason},
         {"level", s.level < 0 ? Json(nullptr) : Json(s.level)},
         {"seconds", s.seconds()},
         {"keys", s.keys},
         {"filters", s.filters},
         {"ns_per_key", JsonMaybe(NanosPerKey(s))},
         {"predicted_ns_per_key", JsonMaybe(s.predicted_ns_per_key)},
         {"predicted_bits_per_key", JsonMaybe(s.predicted_bits_per_key)},
         {"predicted_seconds", JsonMaybe(s.predicted_seconds())}});
  }
  return {
      {"load_s", b.load_seconds},
      {"filter_build_s", b.filter_build_seconds},
      {"listener_s", JsonMaybe(b.listener_seconds)},
      {"build_share", r.build_share()},
      {"build_split", split},
      {"predicted_build_s", JsonMaybe(PredictedSeconds(b))},
      {"filters_built", b.filters_built},
      {"filter_block_bytes", b.filter_block_bytes},
      {"filter_bytes", b.filter_bytes},
      {"num_filters", b.num_filters},
      {"filter_memory_bytes",
       b.filter_memory_bytes < 0 ? Json(nullptr) : Json(b.filter_memory_bytes)},
      {"table_reader_memory", b.table_reader_memory},
      {"table_bytes", b.table_bytes},
      {"num_entries", b.num_entries},
      {"bits_per_key_disk", r.bits_per_key_disk(n)},
      {"bits_per_key_memory", JsonMaybe(r.bits_per_key_memory(n))},
      {"keys_per_filter", r.keys_per_filter(n)},
      {"run_entropy", JsonMaybe(r.run_entropy())},
      {"absent_reads_bound", JsonMaybe(r.absent_reads_bound(n))},
      {"tree", Tree(b)},
      {"files_per_level", b.files_per_level},
      {"tables", tables},
      {"notes", b.notes},
  };
}

// One element of a run's "phases".
Json PhaseJson(const Report& report, const PolicyRun& r, const PhaseResult& p) {
  Json counters = Json::object();
  for (const auto& [name, value] : p.engine) counters[name] = value;
  return {
      {"phase", PhaseName(p.phase)},
      {"ops", p.ops},
      {"calls", p.calls},
      {"found", p.found},
      {"seconds", p.seconds},
      {"time_capped", p.time_capped},
      {"probes", p.io.probes},
      {"positives", p.io.positives},
      {"reads", p.io.reads},
      {"bytes", p.io.bytes},
      {"probes_per_op", p.probes_per_op()},
      {"fpr", JsonMaybe(p.fpr())},
      {"reads_per_op", p.reads_per_op()},
      {"ratio_vs_base", JsonMaybe(RatioVsBase(report, r, p))},
      {"ratio_vs_bound", JsonMaybe(RatioVsBound(report, r, p))},
      {"bytes_per_op", p.bytes_per_op()},
      {"ops_per_s", p.ops_per_second()},
      {"p50_us", p.p50_us},
      {"p99_us", p.p99_us},
      {"engine_counters", counters},
  };
}

Json RunJson(const Report& report, const PolicyRun& r) {
  Json run = {
      {"engine", r.engine},
      {"policy", r.label},
      {"filter", r.policy.ToString()},
      {"family", r.policy.FamilyName()},
      {"reference", r.reference},
      {"implicit", r.implicit},
      {"skipped", r.skipped},
  };
  if (r.skipped) {
    run["skip_reason"] = r.skip_reason;
    return run;
  }
  run["build"] = BuildJson(r, report.num_keys);
  Json phases = Json::array();
  for (const PhaseResult& p : r.phases) {
    phases.push_back(PhaseJson(report, r, p));
  }
  run["phases"] = phases;
  return run;
}

// One engine's verdict: the two runs by their labels, null if none ran.
Json VerdictJson(const Verdict& v) {
  Json out = {{"engine", v.engine}, {"text", v.text}};
  if (v.ours == nullptr) {
    out["ours"] = nullptr;
    out["rival"] = nullptr;
    return out;
  }
  out["ours"] = v.ours->label;
  out["rival"] = v.rival->label;
  out["ratio"] = JsonMaybe(v.ratio);
  out["bytes_ratio"] = v.bytes_ratio;
  out["p50_ratio"] = JsonMaybe(v.p50_ratio);
  out["p99_ratio"] = JsonMaybe(v.p99_ratio);
  out["build_ratio"] = JsonMaybe(v.build_ratio);
  return out;
}

}  // namespace

std::string FormatJson(const Report& report) {
  Json header = Json::object();
  for (const auto& [key, value] : report.header) header[key] = value;
  Json engines = Json::array();
  for (const EngineInfo& e : report.engines) {
    engines.push_back(
        {{"name", e.name}, {"version", e.version}, {"io_mode", e.io_mode}});
  }
  Json runs = Json::array();
  for (const PolicyRun& r : report.runs) runs.push_back(RunJson(report, r));
  Json verdicts = Json::array();
  for (const Verdict& v : Verdicts(report)) verdicts.push_back(VerdictJson(v));
  const Json root = {
      {"tool", "sstfilter_compare"},   {"header", header},
      {"num_keys", report.num_keys},   {"engines", engines},
      {"baselines", report.baselines}, {"runs", runs},
      {"notes", report.notes},         {"verdicts", verdicts},
  };
  return root.dump(2) + "\n";
}

// --- charts
// ---------------------------------------------------------------------

namespace {

// One line of a chart: the runs of one filter family on one engine, in
// order of bits per key.
struct Series {
  std::string engine;
  std::string family;
  std::vector<const PolicyRun*> runs;
};

std::vector<Series> PlotSeries(const Report& report) {
  std::vector<Series> series;
  for (const PolicyRun& r : report.runs) {
    if (r.skipped || r.policy.family == Family::kNone) continue;
    if (r.Find(Phase::kAbsent) == nullptr) continue;
    Series* s = nullptr;
    for (Series& x : series) {
      if (x.engine == r.engine && x.family == r.policy.FamilyName()) s = &x;
    }
    if (s == nullptr) {
      series.push_back({r.engine, r.policy.FamilyName(), {}});
      s = &series.back();
    }
    s->runs.push_back(&r);
  }
  for (Series& s : series) {
    std::sort(s.runs.begin(), s.runs.end(),
              [](const PolicyRun* a, const PolicyRun* b) {
                return a->build.filter_block_bytes <
                       b->build.filter_block_bytes;
              });
  }
  return series;
}

}  // namespace

std::string FormatPlotData(const Report& report) {
  std::string out;
  int index = 0;
  for (const Series& s : PlotSeries(report)) {
    out += Printf("# index %d: %s %s\n", index++, s.engine.c_str(),
                  s.family.c_str());
    out +=
        "# bits_per_key reads_absent reads_neighbour fpr_absent_pct "
        "fpr_neighbour_pct policy\n";
    for (const PolicyRun* r : s.runs) {
      const PhaseResult* a = r->Find(Phase::kAbsent);
      const PhaseResult* nb = r->Find(Phase::kNeighbour);
      auto pct = [](const PhaseResult* p) {
        return p == nullptr || p->fpr() < 0 ? std::string("NaN")
                                            : Num(100 * p->fpr());
      };
      out += Num(r->bits_per_key_disk(report.num_keys)) + " " +
             Num(a->reads_per_op()) + " " +
             (nb ? Num(nb->reads_per_op()) : std::string("NaN")) + " " +
             pct(a) + " " + pct(nb) + " " + Json(r->label).dump() + "\n";
    }
    out += "\n\n";
  }
  return out;
}

namespace {

// The plot command of one engine's panel: reads per Get (`reads`) or FPR,
// one line per family in its colour.
std::string PlotPanel(const Report& report, const std::vector<Series>& series,
                      const std::map<std::string, int>& colour,
                      const std::string& engine, bool reads) {
  std::string version;
  for (const EngineInfo& e : report.engines) {
    if (e.name == engine) version = e.version;
  }
  std::string out = "set title \"" + engine + " " + version + ": " +
                    (reads ? "reads per Get, " : "FPR, ") +
                    "absent keys (solid), neighbour keys (dashed)\"\n";
  std::vector<std::string> plots;
  // Points are labelled with their policy unless there are many (a
  // sweep draws curves); labels need room on the right.
  size_t points = 0;
  for (const Series& s : series) {
    if (s.engine == engine) points += s.runs.size();
  }
  const bool labels = points <= 10;
  out += labels ? "set offsets graph 0.05, graph 0.35, 0, 0\n"
                : "set offsets graph 0.02, graph 0.02, 0, 0\n";
  int index = 0;
  for (const Series& s : series) {
    const int i = index++;
    if (s.engine != engine) continue;
    const int c = colour.at(s.family);
    const int absent_col = reads ? 2 : 4;
    plots.push_back(Printf(
        "'plot.dat' index %d using 1:%d with linespoints lc %d pt 7 dt 1 "
        "title \"%s\"",
        i, absent_col, c, s.family.c_str()));
    plots.push_back(Printf(
        "'plot.dat' index %d using 1:%d with linespoints lc %d pt 6 dt 2 "
        "notitle",
        i, absent_col + 1, c));
    if (labels) {
      plots.push_back(
          Printf("'plot.dat' index %d using 1:%d:6 with labels left offset 1,0 "
                 "font \",8\" tc lt %d notitle",
                 i, absent_col, c));
    }
  }
  if (reads) {
    const PolicyRun* none = report.FindRun(engine, "none");
    const PhaseResult* a = none ? none->Find(Phase::kAbsent) : nullptr;
    if (a != nullptr && a->reads_per_op() > 0) {
      plots.push_back(Num(a->reads_per_op()) +
                      " with lines lc rgb \"black\" dt 2 title \"no "
                      "filter (absent)\"");
    }
  }
  out += "plot ";
  for (size_t i = 0; i < plots.size(); i++) {
    out += (i ? ", \\\n     " : "") + plots[i];
  }
  out += "\n";
  return out;
}

}  // namespace

std::string FormatPlotScript(const Report& report,
                             const std::string& terminal) {
  const std::vector<Series> series = PlotSeries(report);
  std::vector<std::string> engines;
  for (const Series& s : series) {
    if (std::find(engines.begin(), engines.end(), s.engine) == engines.end()) {
      engines.push_back(s.engine);
    }
  }
  // One colour per family, the same in every panel.
  std::map<std::string, int> colour;
  for (const Series& s : series) {
    colour.emplace(s.family, static_cast<int>(colour.size()) + 1);
  }
  const int panels = static_cast<int>(engines.size());
  std::string out =
      "# Drawn by sstfilter_compare --plot; run in this folder: "
      "gnuplot plots.gp\n";
  out += Printf("set terminal %s size %d,520 font \"sans,10\"\n",
                terminal.c_str(), 80 + 640 * std::max(1, panels));
  out += "set termoption noenhanced\n";
  // Colours that stay readable on white, one per family.
  const char* const kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                  "#9467bd", "#8c564b", "#e377c2", "#17becf"};
  for (int i = 0; i < 8; i++) {
    out += Printf("set linetype %d lc rgb \"%s\" lw 1.5\n", i + 1, kColours[i]);
  }
  out +=
      "set grid\nset logscale y\nset key bottom left font \",9\"\n"
      "set xlabel \"filter bits per key (on disk)\"\n";
  for (int chart = 0; chart < 2; chart++) {
    const bool reads = chart == 0;
    out +=
        std::string("set output '") + (reads ? "reads.png" : "fpr.png") + "'\n";
    out += Printf("set multiplot layout 1,%d\n", std::max(1, panels));
    out += std::string("set ylabel \"") +
           (reads ? "data-block reads per Get"
                  : "false positives per filter probe (%)") +
           "\"\n";
    for (const std::string& engine : engines) {
      out += PlotPanel(report, series, colour, engine, reads);
    }
    out += "unset multiplot\n";
  }
  return out;
}

}  // namespace compare
}  // namespace sstfilter
