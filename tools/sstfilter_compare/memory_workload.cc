// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include "tools/sstfilter_compare/memory_workload.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sstfilter {
namespace compare {

namespace {

double Counter(const PhaseResult& r, const std::string& name) {
  auto it = r.engine.find(name);
  return it == r.engine.end() ? 0 : static_cast<double>(it->second);
}

std::string Mib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", bytes / (1 << 20));
  return buf;
}

std::string Fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

bool Builtin(const Policy& p) { return p.family != Family::kSstfilter; }

// The block cache's hits (`what` "_HIT") or misses ("_MISS") over every
// block type, from the tickers.
double CacheCount(const PhaseResult& r, const char* what) {
  double n = 0;
  for (const char* type : {"DATA", "INDEX", "FILTER"}) {
    n += Counter(r, std::string("ticker.BLOCK_CACHE_") + type + what);
  }
  return n;
}

double CacheLookups(const PhaseResult& r) {
  return CacheCount(r, "_HIT") + CacheCount(r, "_MISS");
}

// The block cache's hit rate over every block type; 0 with no lookups.
double OverallHitRate(const PhaseResult& r) {
  const double lookups = CacheLookups(r);
  return lookups == 0 ? 0 : CacheCount(r, "_HIT") / lookups;
}

Status MeasureWorkload(const MemoryWorkloadOptions& options,
                       const KeySpace& keys, const Zipf* zipf,
                       const std::string& tag, Engine* engine,
                       Progress* progress, MemoryPoint* point) {
  Status err = engine->ReopenWithBlockCache(point->workload.budget);
  if (!err.ok()) return err;
  LookupOptions lookup = options.lookup;
  lookup.absent_share = point->workload.absent_share;
  lookup.zipf = zipf;
  const auto update = [progress](uint64_t done, uint64_t total) {
    progress->Update(done, total);
  };
  progress->Begin(tag + ": warm-up");
  double previous = -1;
  for (int c = 0; c < options.max_warmup_chunks; c++) {
    lookup.reads = options.warmup_chunk;
    lookup.seed = options.lookup.seed + 1000 + static_cast<uint64_t>(c);
    PhaseResult chunk;
    err = RunPhase(engine, keys, Phase::kMixed, lookup, update, &chunk);
    if (!err.ok()) return Status::Corruption("warm-up: " + err.message());
    point->warmup_gets += chunk.ops;
    const double hit = OverallHitRate(chunk);
    // Settled: a change within `settle`, or within 3 standard deviations
    // of the difference of two steps' sampled rates.
    const double lookups = CacheLookups(chunk);
    const double noise =
        lookups > 0 ? 3 * std::sqrt(2 * hit * (1 - hit) / lookups) : 0;
    if (previous >= 0 &&
        std::fabs(hit - previous) <= std::max(options.settle, noise)) {
      point->settled = true;
      break;
    }
    previous = hit;
  }
  progress->End(std::to_string(point->warmup_gets) + " Gets");
  progress->Begin(tag + ": Gets");
  lookup.reads = options.lookup.reads;
  lookup.seed = options.lookup.seed;
  err = RunPhase(engine, keys, Phase::kMixed, lookup, update, &point->gets);
  if (!err.ok()) return Status::Corruption("Gets: " + err.message());
  engine->MemoryInUse(&point->cache_bytes, &point->outside_bytes);
  progress->End(Fixed(point->gets.ops_per_second(), 0) + " Gets/s");
  return Status::OK();
}

// Refuses a database that is too small for the budgets, or budgets too
// small for the index blocks every Get needs (if they are in the cache).
Status CheckSizes(const MemoryWorkloadOptions& options, const MemoryRun& run,
                  bool index_in_cache, bool partitioned) {
  uint64_t largest = 0, smallest = UINT64_MAX;
  for (const MemoryWorkload& w : options.workloads) {
    largest = std::max(largest, w.budget);
    smallest = std::min(smallest, w.budget);
  }
  const double db = static_cast<double>(run.build.table_bytes);
  if (db < options.min_db_over_budget * static_cast<double>(largest)) {
    return Status::InvalidArgument(
        "--memory: the database of " + run.label + " is " + Mib(db) + " MiB, " +
        Fixed(db / static_cast<double>(largest), 1) + "x the largest budget (" +
        Mib(static_cast<double>(largest)) + " MiB); the mode needs at least " +
        Fixed(options.min_db_over_budget, 0) +
        "x, so that the budget is a cache and not a copy (more --num or a "
        "smaller --memory)");
  }
  const uint64_t index =
      partitioned ? run.build.top_level_index_bytes : run.build.index_bytes;
  if (index_in_cache && smallest < index) {
    return Status::InvalidArgument(
        "--memory: a budget of " + Mib(static_cast<double>(smallest)) +
        " MiB is smaller than the " +
        (partitioned ? std::string("top-level index blocks")
                     : std::string("index blocks")) +
        " every Get needs (" + Mib(static_cast<double>(index)) +
        " MiB in the database of " + run.label + "): give a larger --memory" +
        (partitioned ? std::string() : std::string(" or --partitioned")));
  }
  return Status::OK();
}

}  // namespace

std::string MemoryWorkload::Name() const {
  return Mib(static_cast<double>(budget)) + " MiB, absent " +
         FormatNumber(absent_share) + ", " +
         (zipf_theta > 0 ? "zipf:" + FormatNumber(zipf_theta)
                         : std::string("uniform"));
}

double MemoryPoint::DataReads() const {
  if (gets.engine.count("perf.block_read_count") == 0) {
    return gets.reads_per_op();  // LevelDB: index and filters stay outside
  }
  const double all = Counter(gets, "perf.block_read_count");
  return gets.ops == 0 ? 0
                       : (all - Counter(gets, "perf.index_block_read_count") -
                          Counter(gets, "perf.filter_block_read_count")) /
                             static_cast<double>(gets.ops);
}
double MemoryPoint::IndexReads() const {
  return gets.ops == 0 ? 0
                       : Counter(gets, "perf.index_block_read_count") /
                             static_cast<double>(gets.ops);
}
double MemoryPoint::FilterReads() const {
  return gets.ops == 0 ? 0
                       : Counter(gets, "perf.filter_block_read_count") /
                             static_cast<double>(gets.ops);
}
double MemoryPoint::HitRate(const char* type) const {
  if (*type == '\0') return OverallHitRate(gets);
  const double hit =
      Counter(gets, std::string("ticker.BLOCK_CACHE_") + type + "_HIT");
  const double miss =
      Counter(gets, std::string("ticker.BLOCK_CACHE_") + type + "_MISS");
  return hit + miss == 0 ? -1 : hit / (hit + miss);
}

Status RunMemoryWorkload(const MemoryWorkloadOptions& options,
                         const KeySpace& keys, Engine* engine,
                         Progress* progress, MemoryReport* report) {
  report->num_keys = keys.num_keys();
  report->workloads = options.workloads;
  // RocksDB's index blocks are in the cache, LevelDB's in its tables.
  const bool index_in_cache = std::string(engine->name()) == "rocksdb";
  std::map<double, std::unique_ptr<Zipf>> zipfs;
  for (const MemoryWorkload& w : options.workloads) {
    if (w.zipf_theta > 0 && zipfs.count(w.zipf_theta) == 0) {
      zipfs[w.zipf_theta] =
          std::make_unique<Zipf>(keys.num_keys(), w.zipf_theta);
    }
  }
  for (size_t i = 0; i < options.runs.size(); i++) {
    MemoryRun run;
    run.engine = engine->name();
    run.label = options.runs[i].label;
    run.policy = options.runs[i].policy;
    char sub[64];
    std::snprintf(sub, sizeof(sub), "/memory-%s-%02zu", engine->name(), i + 1);
    const std::string dir = options.dir + sub;
    const std::string tag = run.engine + " " + run.label;
    progress->Begin(tag + ": load");
    Status err = engine->Build(
        run.policy, keys, dir,
        [progress](uint64_t done, uint64_t total) {
          progress->Update(done, total);
        },
        &run.build);
    if (!err.ok()) return err;
    if (run.build.num_entries != keys.num_keys()) {
      return Status::Corruption(
          "the database holds " + std::to_string(run.build.num_entries) +
          " entries, expected " + std::to_string(keys.num_keys()));
    }
    progress->End(Fixed(run.bits_per_key(keys.num_keys()), 2) +
                  " filter bits/key");
    err = CheckSizes(options, run, index_in_cache, options.partitioned);
    if (!err.ok()) return err;
    for (const MemoryWorkload& w : options.workloads) {
      MemoryPoint point;
      point.workload = w;
      const Zipf* zipf = w.zipf_theta > 0 ? zipfs[w.zipf_theta].get() : nullptr;
      err = MeasureWorkload(options, keys, zipf, tag + " (" + w.Name() + ")",
                            engine, progress, &point);
      if (!err.ok()) return err;
      if (!point.settled) {
        report->notes.push_back(run.engine + " " + run.label + ", " + w.Name() +
                                ": the hit rate had not settled " + "after " +
                                std::to_string(point.warmup_gets) +
                                " warm-up Gets");
      }
      run.points.push_back(std::move(point));
    }
    err = engine->Close();
    if (!err.ok()) return err;
    if (!options.keep) {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
    report->runs.push_back(std::move(run));
  }
  return Status::OK();
}

namespace {

// Per workload: the fastest run of each family (by Gets per second).
struct Best {
  const MemoryRun* run = nullptr;
  const MemoryPoint* point = nullptr;
};

std::map<std::string, Best> BestPerFamily(const MemoryReport& report, size_t w,
                                          const std::string& engine) {
  std::map<std::string, Best> best;
  for (const MemoryRun& r : report.runs) {
    if (r.skipped || w >= r.points.size() || r.engine != engine) continue;
    Best& b = best[r.policy.FamilyName()];
    if (b.point == nullptr ||
        r.points[w].gets.ops_per_second() > b.point->gets.ops_per_second()) {
      b = {&r, &r.points[w]};
    }
  }
  return best;
}

double AllReads(const MemoryPoint& p) { return p.gets.reads_per_op(); }

// The engines of the runs, in run order.
std::vector<std::string> Engines(const MemoryReport& report) {
  std::vector<std::string> engines;
  for (const MemoryRun& r : report.runs) {
    if (std::find(engines.begin(), engines.end(), r.engine) == engines.end()) {
      engines.push_back(r.engine);
    }
  }
  return engines;
}

// "fastest: X; ours A against the best built-in B: ..."
std::string Verdict(const MemoryReport& report, size_t w,
                    const std::string& engine) {
  Best ours, builtin;
  for (const auto& [family, b] : BestPerFamily(report, w, engine)) {
    Best& slot = Builtin(b.run->policy) ? builtin : ours;
    if (slot.point == nullptr ||
        b.point->gets.ops_per_second() > slot.point->gets.ops_per_second()) {
      slot = b;
    }
  }
  if (ours.point == nullptr || builtin.point == nullptr) return "";
  const double gets =
      ours.point->gets.ops_per_second() / builtin.point->gets.ops_per_second();
  const double reads = AllReads(*builtin.point) > 0
                           ? AllReads(*ours.point) / AllReads(*builtin.point)
                           : 0;
  const double tail =
      builtin.point->gets.p999_us > 0
          ? ours.point->gets.p999_us / builtin.point->gets.p999_us
          : 0;
  const Best& fastest = gets >= 1 ? ours : builtin;
  return engine + ": fastest for the budget: " + fastest.run->label + " (" +
         Fixed(fastest.point->gets.ops_per_second(), 0) +
         " Gets/s); our best, " + ours.run->label +
         ", against the best built-in configuration, " + builtin.run->label +
         ": " + Fixed(gets, 2) + "x the Gets per second, " + Fixed(reads, 2) +
         "x the reads per Get, " + Fixed(tail, 2) + "x the p99.9";
}

std::string Pad(std::string s, size_t width, bool left = false) {
  if (s.size() >= width) return s;
  return left ? s + std::string(width - s.size(), ' ')
              : std::string(width - s.size(), ' ') + s;
}

std::string Rate(double r) { return r < 0 ? "-" : Fixed(100 * r, 1); }

}  // namespace

std::string FormatMemoryText(const MemoryReport& report) {
  std::string out;
  for (const auto& [name, value] : report.header) {
    out += name + ": " + value + "\n";
  }
  const uint64_t n = report.num_keys;
  out += "\nDatabases (one per policy)\n";
  out += Pad("engine", 9, true) + Pad("policy", 28, true) + Pad("bits/key", 9) +
         Pad("filters MiB", 12) + Pad("index MiB", 10) + Pad("tables MiB", 11) +
         Pad("load s", 8) + Pad("build s", 8) + "\n";
  for (const MemoryRun& r : report.runs) {
    out += Pad(r.engine, 9, true);
    if (r.skipped) {
      out += Pad(r.label, 28, true) + " skipped: " + r.skip_reason + "\n";
      continue;
    }
    out += Pad(r.label, 28, true) + Pad(Fixed(r.bits_per_key(n), 2), 9) +
           Pad(Mib(static_cast<double>(r.build.filter_block_bytes)), 12) +
           Pad(Mib(static_cast<double>(r.build.index_bytes)), 10) +
           Pad(Mib(static_cast<double>(r.build.table_bytes)), 11) +
           Pad(Fixed(r.build.load_seconds, 1), 8) +
           Pad(Fixed(r.build.filter_build_seconds, 2), 8) + "\n";
  }
  for (size_t w = 0; w < report.workloads.size(); w++) {
    out += "\nWorkload " + std::to_string(w + 1) + ": " +
           report.workloads[w].Name() + " (* the best of its family)\n";
    out += Pad("engine", 9, true) + Pad("policy", 30, true) + Pad("Gets/s", 9) +
           Pad("p50 us", 8) + Pad("p99 us", 8) + Pad("p99.9 us", 9) +
           Pad("reads/Get", 10) + Pad("data", 7) + Pad("index", 7) +
           Pad("filter", 7) + Pad("hit% data", 10) + Pad("index", 7) +
           Pad("filter", 7) + Pad("cache MiB", 10) + Pad("outside", 8) + "\n";
    std::vector<std::string> verdicts;
    for (const std::string& engine : Engines(report)) {
      const std::map<std::string, Best> best = BestPerFamily(report, w, engine);
      for (const MemoryRun& r : report.runs) {
        if (r.skipped || w >= r.points.size() || r.engine != engine) continue;
        const MemoryPoint& p = r.points[w];
        const bool top = best.at(r.policy.FamilyName()).point == &p;
        out +=
            Pad(r.engine, 9, true) +
            Pad((top ? "* " : "  ") + r.label, 30, true) +
            Pad(Fixed(p.gets.ops_per_second(), 0), 9) +
            Pad(Fixed(p.gets.p50_us, 1), 8) + Pad(Fixed(p.gets.p99_us, 1), 8) +
            Pad(Fixed(p.gets.p999_us, 1), 9) +
            Pad(Fixed(p.gets.reads_per_op(), 3), 10) +
            Pad(Fixed(p.DataReads(), 3), 7) + Pad(Fixed(p.IndexReads(), 3), 7) +
            Pad(Fixed(p.FilterReads(), 3), 7) +
            Pad(Rate(p.HitRate("DATA")), 10) +
            Pad(Rate(p.HitRate("INDEX")), 7) +
            Pad(Rate(p.HitRate("FILTER")), 7) +
            Pad(Mib(static_cast<double>(p.cache_bytes)), 10) +
            Pad(Mib(static_cast<double>(p.outside_bytes)), 8) + "\n";
      }
      const std::string verdict = Verdict(report, w, engine);
      if (!verdict.empty()) verdicts.push_back(verdict);
    }
    for (const std::string& v : verdicts) out += "Verdict: " + v + "\n";
  }
  if (!report.notes.empty()) {
    out += "\nNotes\n";
    for (const std::string& note : report.notes) out += "- " + note + "\n";
  }
  return out;
}

std::string FormatMemoryJson(const MemoryReport& report) {
  nlohmann::ordered_json j;
  j["tool"] = "sstfilter_compare";
  j["workload"] = "memory";
  for (const auto& [name, value] : report.header) j["header"][name] = value;
  j["num_keys"] = report.num_keys;
  j["workloads"] = nlohmann::ordered_json::array();
  for (size_t w = 0; w < report.workloads.size(); w++) {
    const MemoryWorkload& wl = report.workloads[w];
    nlohmann::ordered_json verdicts = nlohmann::ordered_json::object();
    for (const std::string& engine : Engines(report)) {
      verdicts[engine] = Verdict(report, w, engine);
    }
    j["workloads"].push_back({{"name", wl.Name()},
                              {"budget_bytes", wl.budget},
                              {"absent_share", wl.absent_share},
                              {"zipf_theta", wl.zipf_theta},
                              {"verdicts", verdicts}});
  }
  j["runs"] = nlohmann::ordered_json::array();
  for (const MemoryRun& r : report.runs) {
    nlohmann::ordered_json run = {
        {"engine", r.engine},
        {"label", r.label},
        {"policy", r.policy.ToString()},
        {"family", r.policy.FamilyName()},
        {"skipped", r.skipped},
        {"skip_reason", r.skip_reason},
        {"bits_per_key", r.bits_per_key(report.num_keys)},
        {"filter_bytes", r.build.filter_block_bytes},
        {"index_bytes", r.build.index_bytes},
        {"top_level_index_bytes", r.build.top_level_index_bytes},
        {"table_bytes", r.build.table_bytes},
        {"load_seconds", r.build.load_seconds},
        {"filter_build_seconds", r.build.filter_build_seconds},
        {"files_per_level", r.build.files_per_level}};
    run["points"] = nlohmann::ordered_json::array();
    for (const MemoryPoint& p : r.points) {
      run["points"].push_back({{"workload", p.workload.Name()},
                               {"warmup_gets", p.warmup_gets},
                               {"settled", p.settled},
                               {"gets", p.gets.ops},
                               {"found", p.gets.found},
                               {"seconds", p.gets.seconds},
                               {"gets_per_second", p.gets.ops_per_second()},
                               {"p50_us", p.gets.p50_us},
                               {"p99_us", p.gets.p99_us},
                               {"p999_us", p.gets.p999_us},
                               {"reads_per_get", p.gets.reads_per_op()},
                               {"data_reads_per_get", p.DataReads()},
                               {"index_reads_per_get", p.IndexReads()},
                               {"filter_reads_per_get", p.FilterReads()},
                               {"hit_rate", p.HitRate("")},
                               {"hit_rate_data", p.HitRate("DATA")},
                               {"hit_rate_index", p.HitRate("INDEX")},
                               {"hit_rate_filter", p.HitRate("FILTER")},
                               {"cache_bytes", p.cache_bytes},
                               {"outside_cache_bytes", p.outside_bytes},
                               {"engine", p.gets.engine}});
    }
    j["runs"].push_back(run);
  }
  j["notes"] = report.notes;
  return j.dump(2) + "\n";
}

std::vector<std::pair<std::string, std::string>> FormatMemoryPlots(
    const MemoryReport& report, const std::string& terminal) {
  std::vector<std::pair<std::string, std::string>> files;
  std::string script;
  for (size_t w = 0; w < report.workloads.size(); w++) {
    // One data block per family, its runs by bits per key.
    std::map<std::string, std::vector<std::pair<double, double>>> families;
    for (const MemoryRun& r : report.runs) {
      if (r.skipped || w >= r.points.size()) continue;
      families[r.engine + " " + r.policy.FamilyName()].push_back(
          {r.bits_per_key(report.num_keys), r.points[w].gets.ops_per_second()});
    }
    const std::string stem = "memory-" + std::to_string(w + 1);
    std::string data, plot;
    int index = 0;
    for (auto& [family, points] : families) {
      std::sort(points.begin(), points.end());
      data += "# " + family + "\n";
      for (const auto& [bits, gets] : points) {
        data += Fixed(bits, 3) + " " + Fixed(gets, 1) + "\n";
      }
      data += "\n\n";
      plot += std::string(index == 0 ? "plot " : ", \\\n     ") + "'" + stem +
              ".dat' index " + std::to_string(index) +
              " with linespoints title '" + family + "'";
      index++;
    }
    if (index == 0) continue;
    files.push_back({stem + ".dat", data});
    script += "set terminal " + terminal + "\nset output '" + stem +
              ".png'\nset title 'Gets per second at " +
              report.workloads[w].Name() +
              "'\nset xlabel 'filter bits per key (on disk; 0: none)'\n"
              "set ylabel 'Gets per second'\nset key outside right\n"
              "set grid\n" +
              plot + "\n\n";
  }
  if (!script.empty()) files.push_back({"memory.gp", script});
  return files;
}

Status ParseByteSize(const std::string& text, uint64_t* bytes) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  const std::string unit = end == nullptr ? "" : std::string(end);
  static const std::pair<const char*, double> kUnits[] = {
      {"", 1},     {"B", 1},        {"KB", 1e3},        {"MB", 1e6},
      {"GB", 1e9}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}};
  for (const auto& [name, scale] : kUnits) {
    if (unit != name) continue;
    if (text.empty() || end == text.c_str() || !(v > 0) || v * scale > 1e15) {
      break;
    }
    *bytes = static_cast<uint64_t>(v * scale);
    if (*bytes == 0) break;
    return Status::OK();
  }
  return Status::InvalidArgument("\"" + text +
                                 "\" is not a size (e.g. 64MB, 1.5GiB)");
}

Status ParseKeyDist(const std::string& text, double* theta) {
  if (text == "uniform") {
    *theta = 0;
    return Status::OK();
  }
  if (text.rfind("zipf:", 0) == 0) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str() + 5, &end);
    if (end != text.c_str() + 5 && *end == '\0' && v > 0 && v < 1) {
      *theta = v;
      return Status::OK();
    }
  }
  return Status::InvalidArgument("\"" + text +
                                 "\" is not a key distribution (uniform, "
                                 "zipf:<theta> with 0 < theta < 1)");
}

}  // namespace compare
}  // namespace sstfilter
