// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// sstfilter_compare end to end: a small comparison on real RocksDB and
// LevelDB databases whose table, CSV and JSON must agree, and whose figures
// must show what filters do (fewer reads for absent keys, none extra for
// present keys), and whose default run ends with a verdict per engine; the
// memory-budget mode runs every phase through one block cache. Bad flags
// must fail with a message and write nothing.

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "harness/scratch.h"
#include "nlohmann/json.hpp"
#include "sstfilter/filter.h"
#include "sstfilter/params.h"
#include "sstfilter/range.h"
#include "sstfilter/spec.h"

namespace sstfilter {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string ReadFile(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A scratch folder, removed at the end of the test.
class ScratchDir : public harness::ScratchDir {
 public:
  ScratchDir() : harness::ScratchDir("compare_tool_test") {}
  fs::path path() const { return harness::ScratchDir::path(); }
};

struct ToolResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

ToolResult RunTool(const ScratchDir& dir,
                   const std::vector<std::string>& args) {
  const fs::path out = dir.path() / "stdout.txt";
  const fs::path err = dir.path() / "stderr.txt";
  std::string cmd = harness::ShellQuote(SSTFILTER_COMPARE_BINARY);
  for (const std::string& a : args) cmd += " " + harness::ShellQuote(a);
  cmd += " >" + harness::ShellQuote(out.string()) + " 2>" +
         harness::ShellQuote(err.string()) + " </dev/null";
  const int status = std::system(cmd.c_str());
  ToolResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadFile(out);
  r.err = ReadFile(err);
  return r;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) lines.push_back(line);
  return lines;
}

std::vector<std::string> Words(const std::string& line) {
  std::vector<std::string> words;
  std::stringstream ss(line);
  std::string w;
  while (ss >> w) words.push_back(w);
  return words;
}

// The rows of the text table that follows the line starting with `title`,
// as maps from column name to cell (column names have no spaces).
std::vector<std::map<std::string, std::string>> TextTable(
    const std::string& text, const std::string& title) {
  std::vector<std::map<std::string, std::string>> rows;
  const std::vector<std::string> lines = Lines(text);
  size_t i = 0;
  while (i < lines.size() && lines[i].rfind(title, 0) != 0) i++;
  if (i + 1 >= lines.size()) return rows;
  // Multi-word headers ("mem bits/key", "x base", "p50 us") are joined
  // by the table's two-space column separator.
  std::vector<std::string> header;
  {
    std::string h = lines[i + 1];
    size_t start = 0;
    while (start < h.size()) {
      size_t end = h.find("  ", start);
      if (end == std::string::npos) end = h.size();
      std::string cell = h.substr(start, end - start);
      if (!cell.empty()) {
        while (!cell.empty() && cell.front() == ' ') cell.erase(0, 1);
        header.push_back(cell);
      }
      start = end + 2;
      while (start < h.size() && h[start] == ' ') start++;
    }
  }
  for (size_t j = i + 2; j < lines.size() && !lines[j].empty(); j++) {
    const std::vector<std::string> cells = Words(lines[j]);
    std::map<std::string, std::string> row;
    for (size_t c = 0; c < header.size() && c < cells.size(); c++) {
      row[header[c]] = cells[c];
    }
    rows.push_back(row);
  }
  return rows;
}

std::vector<std::map<std::string, std::string>> Csv(const std::string& text) {
  std::vector<std::map<std::string, std::string>> rows;
  const std::vector<std::string> lines = Lines(text);
  auto split = [](const std::string& line) {
    std::vector<std::string> cells(1);
    bool quoted = false;
    for (size_t i = 0; i < line.size(); i++) {
      const char c = line[i];
      if (c == '"') {
        if (quoted && i + 1 < line.size() && line[i + 1] == '"') {
          cells.back() += '"';
          i++;
        } else {
          quoted = !quoted;
        }
      } else if (c == ',' && !quoted) {
        cells.emplace_back();
      } else {
        cells.back() += c;
      }
    }
    return cells;
  };
  if (lines.empty()) return rows;
  const std::vector<std::string> header = split(lines[0]);
  for (size_t i = 1; i < lines.size(); i++) {
    const std::vector<std::string> cells = split(lines[i]);
    EXPECT_EQ(cells.size(), header.size()) << lines[i];
    std::map<std::string, std::string> row;
    for (size_t c = 0; c < header.size() && c < cells.size(); c++) {
      row[header[c]] = cells[c];
    }
    rows.push_back(row);
  }
  return rows;
}

double Num(const std::string& s) { return std::stod(s); }

// `printed` is `exact` rounded to `decimals` places.
void ExpectRounded(const std::string& printed, double exact, int decimals,
                   const std::string& what) {
  EXPECT_NEAR(Num(printed), exact, 0.5 * std::pow(10.0, -decimals) + 1e-9)
      << what;
}

const json* FindPhase(const json& doc, const std::string& engine,
                      const std::string& policy, const std::string& phase) {
  for (const json& run : doc["runs"]) {
    if (run["engine"] != engine || run["policy"] != policy) continue;
    for (const json& p : run["phases"]) {
      if (p["phase"] == phase) return &p;
    }
  }
  return nullptr;
}

// The entropy of the key shares of the sorted runs of a tree of `tables`
// (results.json's [level, entries, filter bytes]): each L0 table a run,
// each level L1+ one.
double SortedRunEntropy(const json& tables) {
  std::map<int, double> levels;
  std::vector<double> runs;
  double all = 0;
  for (const json& t : tables) {
    const int level = t[0].get<int>();
    const double keys = t[1].get<double>();
    if (level == 0) runs.push_back(keys);
    if (level > 0) levels[level] += keys;
    all += keys;
  }
  for (const auto& [level, keys] : levels) runs.push_back(keys);
  double h = 0;
  for (double k : runs) h -= k / all * std::log2(k / all);
  return h;
}

TEST(CompareToolTest, SmallComparisonOutputsAgreeAndFiltersSaveReads) {
  ScratchDir dir;
  const fs::path out = dir.path() / "out";
  constexpr int kKeys = 20000;
  const ToolResult r = RunTool(
      dir, {"--num=" + std::to_string(kKeys), "--reads=2000",
            "--phase_seconds=0", "--threads=2",
            "--policies=none,rocksdb:bloom:10,leveldb:bloom:10,"
            "blocked_bloom:10",
            "--out=" + out.string(), "--db_dir=" + (dir.path() / "db").string(),
            "--plot", "--progress=false"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");

  // The terminal shows what results.txt holds, then names the folder.
  const std::string text = ReadFile(out / "results.txt");
  EXPECT_EQ(r.out, text + "\nResults: " + out.string() + "\n");
  // The RocksDB the build found (CMake's SSTFILTER_ROCKSDB_VERSION).
  for (const char* needle :
       {SSTFILTER_ROCKSDB_VERSION_TEXT, "LevelDB 1.", "seed 301",
        "20000 unique keys", "2000 keys per phase"}) {
    EXPECT_NE(text.find(needle), std::string::npos) << needle;
  }
  // Databases were removed (no --keep).
  EXPECT_TRUE(fs::is_empty(dir.path() / "db"));

  const json doc = json::parse(ReadFile(out / "results.json"));
  const auto csv = Csv(ReadFile(out / "results.csv"));
  const auto lookups = TextTable(text, "Lookups");
  const auto filters = TextTable(text, "Filters");
  // RocksDB: 3 policies x 4 phases; LevelDB (no MultiGet): 3 x 3.
  ASSERT_EQ(csv.size(), 21u);
  ASSERT_EQ(lookups.size(), csv.size());
  ASSERT_EQ(filters.size(), 6u);
  ASSERT_EQ(doc["runs"].size(), 6u);

  for (size_t i = 0; i < csv.size(); i++) {
    const auto& row = csv[i];
    const auto& line = lookups[i];
    const std::string what =
        row.at("engine") + " " + row.at("policy") + " " + row.at("phase");
    SCOPED_TRACE(what);
    // Table and CSV name the same rows in the same order.
    EXPECT_EQ(line.at("engine"), row.at("engine"));
    EXPECT_EQ(line.at("policy"), row.at("policy"));
    EXPECT_EQ(line.at("phase"), row.at("phase"));
    EXPECT_EQ(line.at("ops"), row.at("ops"));
    ExpectRounded(line.at("reads/op"), Num(row.at("reads_per_op")), 4, "reads");
    ExpectRounded(line.at("probes/op"), Num(row.at("probes_per_op")), 3,
                  "probes");
    if (row.at("fpr").empty()) {
      EXPECT_EQ(line.at("FPR %"), "-");
    } else {
      ExpectRounded(line.at("FPR %"), 100 * Num(row.at("fpr")), 4, "fpr");
    }
    if (row.at("ratio_vs_base").empty()) {
      EXPECT_EQ(line.at("x base"), "-");
    } else {
      ExpectRounded(line.at("x base"), Num(row.at("ratio_vs_base")), 3, "x");
    }
    // JSON holds the raw counts the CSV's ratios come from.
    const json* p =
        FindPhase(doc, row.at("engine"), row.at("policy"), row.at("phase"));
    ASSERT_NE(p, nullptr);
    const double ops = (*p)["ops"].get<double>();
    EXPECT_EQ(ops, Num(row.at("ops")));
    EXPECT_DOUBLE_EQ((*p)["reads"].get<double>() / ops,
                     Num(row.at("reads_per_op")));
    EXPECT_DOUBLE_EQ((*p)["probes"].get<double>() / ops,
                     Num(row.at("probes_per_op")));
    EXPECT_EQ((*p)["fpr"].is_null(), row.at("fpr").empty());

    // What the figures must show. The run is deterministic (fixed seed,
    // counts summed over threads), so these ceilings never flake.
    EXPECT_EQ(ops, 2000);
    const double reads = Num(row.at("reads_per_op"));
    const bool filtered = row.at("policy") != "none";
    const std::string phase = row.at("phase");
    if (phase == "present") {
      EXPECT_EQ((*p)["found"].get<double>(), ops);  // never a false negative
      EXPECT_GE(reads, 1.0);
      if (filtered) {
        EXPECT_LE(reads, 1.1);
      }
    }
    if (filtered) {
      EXPECT_GE(Num(row.at("probes_per_op")), 1.0);
      // Present keys of a one-table tree probe only their own table: no
      // probe can be a false positive, and the FPR is unknown ("").
      if (phase != "present") {
        ASSERT_FALSE(row.at("fpr").empty());
      }
      if (!row.at("fpr").empty()) {
        EXPECT_LT(Num(row.at("fpr")), 0.05);
      }
    }
    if (filtered && (phase == "absent" || phase == "neighbour")) {
      const auto* none = FindPhase(doc, row.at("engine"), "none", phase);
      ASSERT_NE(none, nullptr);
      const double none_reads =
          (*none)["reads"].get<double>() / (*none)["ops"].get<double>();
      EXPECT_GE(none_reads, 1.0);  // no filter: every probe reads a block
      EXPECT_LT(reads, 0.1 * none_reads);
    }
  }

  // Per policy: the table's bits/key is the CSV's, filters have sizes.
  for (const auto& f : filters) {
    SCOPED_TRACE(f.at("engine") + " " + f.at("policy"));
    for (const auto& row : csv) {
      if (row.at("engine") != f.at("engine") ||
          row.at("policy") != f.at("policy")) {
        continue;
      }
      ExpectRounded(f.at("bits/key"), Num(row.at("bits_per_key_disk")), 2,
                    "bits");
    }
    const double bits = Num(f.at("bits/key"));
    if (f.at("policy") == "none") {
      EXPECT_EQ(bits, 0);
    } else {
      EXPECT_GT(bits, 9.0);
      EXPECT_LT(bits, 16.0);
    }
  }
  for (const json& run : doc["runs"]) {
    EXPECT_EQ(run["build"]["num_entries"], kKeys);
  }

  // Filter build time, split by what made the table: the slices add up to
  // the total; every key went through one flush; on RocksDB's fixed tree
  // each level's compaction built filters for exactly that level's keys.
  const auto builds = TextTable(text, "Filter build");
  ASSERT_EQ(builds.size(), 4u);  // the runs with a filter
  for (const json& run : doc["runs"]) {
    const std::string engine = run["engine"], policy = run["policy"];
    SCOPED_TRACE(engine + " " + policy);
    const json& b = run["build"];
    if (policy == "none") {
      EXPECT_TRUE(b["build_split"].empty());
      continue;
    }
    ASSERT_FALSE(b["build_split"].empty());
    double seconds = 0, flush_seconds = 0;
    uint64_t flushed = 0, filters = 0;
    std::map<int, uint64_t> compacted;
    for (const json& s : b["build_split"]) {
      seconds += s["seconds"].get<double>();
      filters += s["filters"].get<uint64_t>();
      if (s["reason"] == "flush") {
        flushed += s["keys"].get<uint64_t>();
        flush_seconds += s["seconds"].get<double>();
      } else {
        ASSERT_EQ(s["reason"], "compaction");
        ASSERT_TRUE(s["level"].is_number());
        compacted[s["level"].get<int>()] += s["keys"].get<uint64_t>();
      }
    }
    EXPECT_NEAR(seconds, b["filter_build_s"].get<double>(), 1e-9);
    EXPECT_EQ(filters, b["filters_built"].get<uint64_t>());
    EXPECT_EQ(flushed, static_cast<uint64_t>(kKeys));
    if (engine == "rocksdb") {
      std::map<int, uint64_t> level_keys;
      for (const json& t : b["tables"]) {
        const int level = t[0].get<int>();
        if (level > 0) level_keys[level] += t[1].get<uint64_t>();
      }
      EXPECT_EQ(compacted, level_keys);
    }
    for (const auto& row : csv) {
      if (row.at("engine") != engine || row.at("policy") != policy) continue;
      EXPECT_NEAR(Num(row.at("filter_build_flush_s")), flush_seconds,
                  1e-9 * flush_seconds + 1e-12);
    }
    for (const auto& row : builds) {
      if (row.at("engine") != engine || row.at("policy") != policy) continue;
      ExpectRounded(row.at("build s"), b["filter_build_s"].get<double>(), 3,
                    "build s");
      ExpectRounded(row.at("flush s"), flush_seconds, 3, "flush s");
    }
  }

  // Charts.
  for (const char* png : {"reads.png", "fpr.png"}) {
    const std::string bytes = ReadFile(out / png);
    ASSERT_GT(bytes.size(), 1000u) << png;
    EXPECT_EQ(bytes.substr(1, 3), "PNG") << png;
  }
}

TEST(CompareToolTest, BadFlagsFailWithAMessageAndWriteNothing) {
  ScratchDir dir;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--policies=bogus:3"}, "bogus:3"},
      {{"--policies=leveldb:bloom:9.5"}, "whole bits"},
      {{"--policies=rocksdb:bloom@leveldb:bloom:10"}, "no engine"},
      {{"--policies=cuckoo:*"}, "--sweep_bits"},
      {{"--engines=rocksdb", "--policies=leveldb:bloom:10"}, "no policy runs"},
      {{"--engines=mysql"}, "unknown engine"},
      {{"--phases=present,sideways"}, "unknown phase"},
      {{"--num=5"}, "--num"},
      {{"--key_size=8"}, "--key_size"},
      {{"--threads=0"}, "--threads"},
      {{"--baseline=bloom:x"}, "--baseline"},
      {{"--tree=wild"}, "--tree"},
      {{"--workload=range"}, "--engines=rocksdb --tree=natural"},
      {{"--engines=rocksdb", "--tree=natural", "--workload=ranges"},
       "unknown workload"},
      {{"--engines=rocksdb", "--tree=natural", "--workload=range",
        "--range_lengths=0"},
       "--range_lengths"},
      {{"--engines=rocksdb", "--tree=natural", "--workload=range",
        "--range_specs=range:99"},
       "--range_specs"},
      {{"--memory=lots"}, "--memory: \"lots\" is not a size"},
      {{"--memory=1MB", "--workload=range", "--engines=rocksdb",
        "--tree=natural"},
       "not with --workload=range"},
      {{"--memory=1MB", "--key_dist=zipf:1.5"}, "--key_dist"},
      {{"--memory=1MB", "--absent_share=1.2"}, "--absent_share"},
      {{"--memory=1MB", "--policies=rocksdb:bloom@ribbon:10"},
       "X@Y has no meaning here"},
      {{"--partitioned"}, "--partitioned: needs --memory"},
      {{"--engines=rocksdb", "--compaction=tiered"}, "--compaction"},
      {{"--engines=rocksdb", "--compaction=universal"}, "--tree=natural"},
      {{"--engines=rocksdb", "--configure=xml"}, "--configure: unknown way"},
      {{"--plot", "--out="}, "--plot needs --out"},
      {{"stray"}, "unexpected argument"},
      {{"--frobnicate=1"}, "unknown flag --frobnicate"},
      {{"--num=abc"}, "--num: \"abc\" is not a valid uint64"},
      {{"--plot=maybe"}, "--plot: \"maybe\" is not a valid bool"},
      {{"--threads"}, "--threads needs a value"},
      {{"--nonum"}, "unknown flag --nonum"},
      // A flag of a library the tool links (RocksDB's tools) is not ours.
      {{"--flagfile=/dev/null"}, "unknown flag --flagfile"},
  };
  int i = 0;
  for (const auto& [args, message] : cases) {
    const fs::path out = dir.path() / ("out" + std::to_string(i++));
    // The case's own flags come last, so they win (--plot's "--out=").
    std::vector<std::string> all = {"--out=" + out.string()};
    all.insert(all.end(), args.begin(), args.end());
    const ToolResult r = RunTool(dir, all);
    SCOPED_TRACE(args[0]);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
  }

  // A folder that already holds results is left alone.
  const fs::path used = dir.path() / "used";
  fs::create_directories(used);
  std::ofstream(used / "results.json") << "{}";  // closed at the ';'
  const ToolResult r = RunTool(dir, {"--out=" + used.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("already holds results"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFile(used / "results.json"), "{}");
}

// A results folder that cannot be made or written stops the tool before
// the first database (the default run would take minutes): exit 2, the
// problem named, no run started.
TEST(CompareToolTest, UnwritableOutStopsBeforeAnyWork) {
  ScratchDir dir;
  const fs::path file = dir.path() / "a_file";
  std::ofstream(file) << "x";  // closed at the ';'
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/proc/nope", "--out: cannot make the folder /proc/nope"},
      {(file / "sub").string(), "--out: cannot make the folder"},
      {"/proc/self", "--out: cannot write into /proc/self"},
  };
  for (const auto& [out, message] : cases) {
    SCOPED_TRACE(out);
    // A small run, so that the test stays short if the check were late.
    const ToolResult r =
        RunTool(dir, {"--num=1000", "--reads=10", "--engines=leveldb",
                      "--policies=none", "--progress=true", "--out=" + out});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("runs of"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
  // A folder that can be made is made at once, empty.
  const fs::path fresh = dir.path() / "new" / "out";
  const ToolResult r =
      RunTool(dir, {"--out=" + fresh.string(), "--engines=mysql"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(fs::exists(fresh));  // a bad flag before it: not made
}

// --predict_build times each run's builders outside the database, per
// flush and compaction level, and predicts the load's build time from
// that ns/key and the keys each built: every slice gets a positive
// ns/key, the run's prediction is their sum, and the table shows it beside
// the measured time. (How close it comes is timing, not checked here.)
TEST(CompareToolTest, PredictBuildPutsAPredictionBesideEachSlice) {
  ScratchDir dir;
  const fs::path out = dir.path() / "out";
  const ToolResult r = RunTool(
      dir, {"--num=20000", "--reads=100", "--phase_seconds=0",
            "--phases=absent", "--policies=rocksdb:bloom:10,ribbon:10",
            "--predict_build", "--out=" + out.string(), "--progress=false"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = json::parse(ReadFile(out / "results.json"));
  ASSERT_EQ(doc["runs"].size(), 3u);  // rocksdb:bloom:10 on RocksDB only
  for (const json& run : doc["runs"]) {
    SCOPED_TRACE(run["engine"].get<std::string>() + " " +
                 run["policy"].get<std::string>());
    const json& b = run["build"];
    ASSERT_FALSE(b["build_split"].empty());
    double sum = 0;
    for (const json& s : b["build_split"]) {
      ASSERT_TRUE(s["predicted_ns_per_key"].is_number());
      EXPECT_GT(s["predicted_ns_per_key"].get<double>(), 0);
      EXPECT_NEAR(s["predicted_seconds"].get<double>(),
                  s["predicted_ns_per_key"].get<double>() *
                      s["keys"].get<double>() * 1e-9,
                  1e-12);
      sum += s["predicted_seconds"].get<double>();
    }
    EXPECT_NEAR(b["predicted_build_s"].get<double>(), sum, 1e-12);
  }
  const auto builds = TextTable(ReadFile(out / "results.txt"), "Filter build");
  ASSERT_EQ(builds.size(), 3u);
  for (size_t i = 0; i < builds.size(); i++) {
    const json& b = doc["runs"][i]["build"];
    ExpectRounded(builds[i].at("predicted s"),
                  b["predicted_build_s"].get<double>(), 3, "predicted s");
    if (b["filter_build_s"].get<double>() > 0) {
      ExpectRounded(builds[i].at("predicted x"),
                    b["predicted_build_s"].get<double>() /
                        b["filter_build_s"].get<double>(),
                    2, "predicted x");
    }
  }
}

// --predict_build's builders write the filters the load wrote: for
// by_level (and auto) those of the plan the load ended with, on the tree
// it loaded, not the average spec's. Each compaction level's predicted
// bits per key is within 10% of its tables' (the tables of a level were
// planned on the tree as it was when each was built).
TEST(CompareToolTest, PredictBuildBuildsTheLoadsFilters) {
  ScratchDir dir;
  const fs::path out = dir.path() / "out";
  const ToolResult r = RunTool(
      dir,
      {"--engines=rocksdb", "--num=20000", "--reads=100", "--phase_seconds=0",
       "--phases=absent", "--policies=ribbon:10:by_level,ribbon:10",
       "--predict_build", "--out=" + out.string(), "--progress=false"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = json::parse(ReadFile(out / "results.json"));
  ASSERT_EQ(doc["runs"].size(), 2u);
  std::vector<double> top_bits;  // each run's first level below L0
  for (const json& run : doc["runs"]) {
    SCOPED_TRACE(run["policy"].get<std::string>());
    const json& b = run["build"];
    std::map<int, double> bytes, keys;  // per level, of the tables
    for (const json& t : b["tables"]) {
      keys[t[0].get<int>()] += t[1].get<double>();
      bytes[t[0].get<int>()] += t[2].get<double>();
    }
    int checked = 0;
    for (const json& s : b["build_split"]) {
      if (s["reason"] != "compaction") continue;
      const int level = s["level"].get<int>();
      ASSERT_GT(keys[level], 0) << level;
      const double tables = 8 * bytes[level] / keys[level];
      EXPECT_NEAR(s["predicted_bits_per_key"].get<double>() / tables, 1.0, 0.10)
          << "L" << level << ": tables " << tables;
      if (checked++ == 0) top_bits.push_back(tables);
    }
    EXPECT_GE(checked, 2);
  }
  // The test has teeth: by_level's top level has clearly more bits than
  // the uniform spec's, so the average spec's filters would miss it.
  ASSERT_EQ(top_bits.size(), 2u);
  EXPECT_GT(top_bits[0], 1.3 * top_bits[1]);
}

// --help and --helpfull print this tool's flags only (not those of the
// libraries it links, nor gflags' own), each with its default, and exit 0.
TEST(CompareToolTest, HelpPrintsOnlyTheToolsFlags) {
  ScratchDir dir;
  const ToolResult help = RunTool(dir, {"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_EQ(help.err, "");
  for (const char* flag : {"--policies (string, default \"none,",
                           "--num (uint64, default 1000000)", "--out (string",
                           "--plot (bool, default false)", "--reads (uint64"}) {
    EXPECT_NE(help.out.find(flag), std::string::npos) << flag;
  }
  int flags = 0;
  for (const std::string& line : Lines(help.out)) {
    if (line.rfind("  --", 0) == 0) flags++;
  }
  // The tool's own flags (30 today), not RocksDB's tools' ~200.
  EXPECT_GE(flags, 25);
  EXPECT_LE(flags, 50);
  for (const char* other : {"--flagfile", "--fromenv", "--helpxml", "--db "}) {
    EXPECT_EQ(help.out.find(other), std::string::npos) << other;
  }
  for (const char* same : {"--helpfull", "--helpshort", "-h"}) {
    const ToolResult r = RunTool(dir, {same});
    EXPECT_EQ(r.exit_code, 0) << same;
    EXPECT_EQ(r.out, help.out) << same;
  }
}

// --workload=range: on natural trees, empty scans with a range filter (or
// the prefix Bloom, where a range fits its prefix) read far fewer data
// blocks than without; non-empty scans return the same keys (the tool
// stops if they differ) and read no more; the off-line FPR is within 3
// sigma of 1 - e^-(L / 2^(B-2)), the bound L / 2^(B-2) being its first
// term. RocksDB's min/max SstQueryFilter runs where the
// release has it (9.7+): it is asked about tables, returns the same keys
// and reads no more; elsewhere its run says why not.
TEST(CompareToolTest, RangeWorkloadSkipsTablesOfEmptyRanges) {
  ScratchDir dir;
  const fs::path out = dir.path() / "out";
  const ToolResult r =
      RunTool(dir, {"--engines=rocksdb", "--tree=natural", "--workload=range",
                    "--num=20000", "--scans=200", "--range_lengths=1,16,4096",
                    "--range_specs=range:10,range:14", "--out=" + out.string(),
                    "--progress=false"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(ReadFile(out / "results.json"));
  EXPECT_EQ(j["workload"], "range");
  ASSERT_EQ(j["runs"].size(), 4u);  // range:10, range:14, prefix, SstQuery
  for (const json& run : j["runs"]) {
    SCOPED_TRACE(run["name"].get<std::string>());
    const bool sqf = run["name"] == "rocksdb:sst_query_filter";
    if (sqf) {
      EXPECT_EQ(run["skipped"], !SSTFILTER_ROCKSDB_HAS_SST_QUERY_FILTER);
      if (run["skipped"]) {
        EXPECT_NE(run["skip_reason"].get<std::string>().find(
                      "not available: " SSTFILTER_ROCKSDB_VERSION_TEXT),
                  std::string::npos)
            << run["skip_reason"];
        continue;
      }
    }
    EXPECT_GT(run["tables"].get<double>(), 10);
    if (sqf) {
      // A min and a max of 8 bytes and their framing per table (54 bytes
      // in docs/BENCHMARKS.md's run), not bits per key.
      const double bytes_per_table = run["rival_bits_per_key"].get<double>() *
                                     run["entries"].get<double>() /
                                     run["tables"].get<double>() / 8;
      EXPECT_GE(bytes_per_table, 16);
      EXPECT_LE(bytes_per_table, 128);
    } else {
      EXPECT_GT(run["rival_bits_per_key"].get<double>(), 9);
    }
    EXPECT_GT(run["create_none_us"].get<double>(), 0);
    EXPECT_GT(run["create_with_us"].get<double>(), 0);
    ASSERT_EQ(run["rows"].size(), 6u);
    const bool prefix = run["name"] == "rocksdb:prefix_bloom:7";
    for (const json& row : run["rows"]) {
      const uint64_t len = row["length"];
      SCOPED_TRACE(len);
      const json& none = row["none"];
      const json& with = row["with"];
      EXPECT_EQ(none["scans"], 200);
      // Without a filter a scan reads a data block from each level.
      EXPECT_GE(none["data_blocks_per_scan"].get<double>(), 2);
      EXPECT_GT(none["bytes_per_scan"].get<double>(), 4000);
      EXPECT_EQ(with["keys"], none["keys"]);
      if (!row["empty"]) {
        EXPECT_GE(none["keys"].get<double>(), 200);
        EXPECT_LE(with["data_blocks"].get<double>(),
                  1.01 * none["data_blocks"].get<double>());
      } else if (sqf) {
        // Asked about every table a scan opens; it skips only tables
        // whose keys all lie on one side of the range.
        EXPECT_GE(with["tables_checked"].get<double>(), 200);
        EXPECT_LE(with["data_blocks"].get<double>(),
                  none["data_blocks"].get<double>());
      } else if (len <= 16) {
        // range:10 at L = 16: 6.25% of the tables at most; the prefix
        // Bloom: ranges within one 7-byte prefix (nearly all).
        EXPECT_EQ(none["keys"], 0);
        EXPECT_LE(with["data_blocks"].get<double>(),
                  0.15 * none["data_blocks"].get<double>());
      } else {
        // 4096 images: past range:10's bound, past the 7-byte prefix.
        EXPECT_GE(with["data_blocks"].get<double>(),
                  (prefix ? 1.0 : 0.3) * none["data_blocks"].get<double>());
      }
      if (prefix) {
        EXPECT_EQ(row["fit"] == row["none"]["scans"], len == 1);
      }
    }
  }
  ASSERT_EQ(j["fpr"].size(), 6u);
  for (const json& f : j["fpr"]) {
    SCOPED_TRACE(f["spec"].get<std::string>() + " L " + f["length"].dump());
    RangeFilterSpec spec;
    ASSERT_TRUE(ParseRangeFilterSpec(f["spec"].get<std::string>(), &spec).ok());
    ASSERT_EQ(spec.max_range, 4096u);  // L <= 4096: at most two blocks
    // An empty query [lo, lo + L] covers L images, one more where the upper
    // bound's last byte is 0 (1 in 256); a table's m keys hash into
    // r = m 2^(B-2) values, each inside the query's windows with
    // probability L / r. Hash collisions and two windows that overlap are
    // rarer than 1 in 2^(B-1): left out.
    const double L = f["length"].get<double>() + 1.0 / 256;
    const double expected_fpr =
        1 - std::exp(-L / std::exp2(spec.bits_per_key - 2));
    const double q = f["queries"].get<double>();
    const double positives = f["positives"].get<double>();
    const double sigma = std::sqrt(q * expected_fpr * (1 - expected_fpr));
    std::fprintf(stderr, "%s L=%s: %.0f of %.0f, expected %.1f (sigma %.1f)\n",
                 f["spec"].get<std::string>().c_str(),
                 f["length"].dump().c_str(), positives, q, q * expected_fpr,
                 sigma);
    EXPECT_NEAR(positives, q * expected_fpr, 3 * sigma + 1);
    EXPECT_EQ(f["bound"].get<double>(),
              RangeFprBound(spec.bits_per_key, f["length"].get<uint64_t>()));
  }
  ASSERT_EQ(j["build"].size(), 3u);  // range:10, range:14, RocksDB's Bloom
  for (const json& b : j["build"]) EXPECT_GT(b["ns_per_key"].get<double>(), 0);
  EXPECT_NE(ReadFile(out / "results.txt").find("Range scans"),
            std::string::npos);
}

// RocksDB's Ribbon at the memory of an sstfilter policy: sized with
// RocksDB's own builder, run beside it, in the equal-memory table and in
// the charts' Ribbon curve.
TEST(CompareToolTest, RibbonRunsAtTheMemoryOfAnSstfilterPolicy) {
  ScratchDir dir;
  const fs::path out = dir.path() / "out";
  const ToolResult r = RunTool(
      dir, {"--engines=rocksdb", "--num=20000", "--reads=2000",
            "--phase_seconds=0", "--phases=absent",
            "--policies=rocksdb:ribbon@blocked_bloom:10,rocksdb:ribbon:10",
            "--out=" + out.string(), "--plot", "--progress=false"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = json::parse(ReadFile(out / "results.json"));
  // The reference runs first (implicitly), then Ribbon at its memory.
  ASSERT_EQ(doc["runs"].size(), 3u);
  const json& ref = doc["runs"][0];
  const json& sized = doc["runs"][1];
  EXPECT_EQ(ref["policy"], "blocked_bloom:10");
  EXPECT_TRUE(ref["implicit"].get<bool>());
  EXPECT_EQ(sized["policy"], "rocksdb:ribbon@blocked_bloom:10");
  EXPECT_EQ(sized["family"], "rocksdb:ribbon");
  EXPECT_EQ(sized["reference"], "blocked_bloom:10");
  ASSERT_FALSE(sized["skipped"].get<bool>());
  // Ribbon's bits per key are Bloom-equivalent: at the memory of 10 real
  // bits per key it is set well above 10, and its filters are no larger
  // than the reference's (the L0 tables, flushed, hold Bloom filters; they
  // are a small share of the keys).
  const std::string filter = sized["filter"].get<std::string>();
  ASSERT_EQ(filter.rfind("rocksdb:ribbon:", 0), 0u) << filter;
  EXPECT_GT(std::stod(filter.substr(15)), 11) << filter;
  const double ref_bytes = ref["build"]["filter_bytes"].get<double>();
  const double sized_bytes = sized["build"]["filter_bytes"].get<double>();
  EXPECT_LE(sized_bytes, 1.02 * ref_bytes);
  EXPECT_GE(sized_bytes, 0.9 * ref_bytes);
  // At equal memory Ribbon has fewer false positives than blocked Bloom.
  const json* ref_absent =
      FindPhase(doc, "rocksdb", "blocked_bloom:10", "absent");
  const json* sized_absent =
      FindPhase(doc, "rocksdb", "rocksdb:ribbon@blocked_bloom:10", "absent");
  ASSERT_NE(ref_absent, nullptr);
  ASSERT_NE(sized_absent, nullptr);
  EXPECT_LT((*sized_absent)["fpr"].get<double>(),
            (*ref_absent)["fpr"].get<double>());

  const std::string text = ReadFile(out / "results.txt");
  const auto pairs = TextTable(text, "Equal memory");
  ASSERT_FALSE(pairs.empty());
  EXPECT_NE(text.find("rocksdb:ribbon@blocked_bloom:10"), std::string::npos);
  // One chart series per family: Ribbon's holds both Ribbon runs.
  const std::string plot = ReadFile(out / "plot.dat");
  EXPECT_NE(plot.find("rocksdb:ribbon"), std::string::npos);
}

// --tree=natural: RocksDB's own automatic compactions shape the tree
// (several levels, dynamic level sizes: the deepest level is L6), the same
// tree for policies of about the same memory, and Ribbon everywhere sized
// table by table to a by_level policy's whole-tree filter bytes.
TEST(CompareToolTest, NaturalTreeHasCompactionMadeLevels) {
  ScratchDir dir;
  const fs::path out = dir.path() / "out";
  const ToolResult r = RunTool(
      dir,
      {"--engines=rocksdb", "--tree=natural", "--num=20000", "--value_size=100",
       "--levels=3", "--reads=2000", "--phase_seconds=0",
       "--phases=present,absent",
       "--policies=ribbon:10:by_level,rocksdb:ribbon_all@ribbon:10:by_level",
       "--out=" + out.string(), "--plot", "--progress=false"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = json::parse(ReadFile(out / "results.json"));
  ASSERT_EQ(doc["runs"].size(), 2u);
  const json& ours = doc["runs"][0]["build"];
  const json& ribbon = doc["runs"][1]["build"];
  EXPECT_EQ(doc["runs"][1]["filter"].get<std::string>().rfind(
                "rocksdb:ribbon_all:", 0),
            0u);
  // RocksDB's 7 levels; compactions filled the deepest and at least one
  // more below L0; every entry is in some table.
  const std::vector<int> files = ours["files_per_level"];
  ASSERT_EQ(files.size(), 7u);
  EXPECT_GT(files[6], 1);
  int levels_below_l0 = 0;
  for (size_t l = 1; l < files.size(); l++) levels_below_l0 += files[l] > 0;
  EXPECT_GE(levels_below_l0, 2);
  uint64_t entries = 0;
  for (const json& t : ours["tables"]) entries += t[1].get<uint64_t>();
  EXPECT_EQ(entries, 20000u);
  // The paced load makes the tree independent of thread timing.
  EXPECT_EQ(ribbon["files_per_level"], ours["files_per_level"]);
  // by_level gives the deepest level fewer bits than the average.
  uint64_t l6_keys = 0, l6_bytes = 0;
  for (const json& t : ours["tables"]) {
    if (t[0] != 6) continue;
    l6_keys += t[1].get<uint64_t>();
    l6_bytes += t[2].get<uint64_t>();
  }
  ASSERT_GT(l6_keys, 0u);
  EXPECT_LT(8.0 * static_cast<double>(l6_bytes) / static_cast<double>(l6_keys),
            ours["bits_per_key_disk"].get<double>());
  // Equal memory: within a few percent of the reference's filter bytes.
  const double ratio =
      ribbon["filter_bytes"].get<double>() / ours["filter_bytes"].get<double>();
  EXPECT_NEAR(ratio, 1.0, 0.03);
  const std::string text = ReadFile(out / "results.txt");
  EXPECT_NE(text.find("natural: keys Put in random order"), std::string::npos);
  EXPECT_FALSE(TextTable(text, "Levels").empty());
  // The charts draw by_level as its own family.
  EXPECT_NE(ReadFile(out / "plot.dat").find("ribbon:by_level"),
            std::string::npos);
}

// --compaction=universal: the natural tree under universal compaction
// loads, every entry is in a table, and by_level with its listener gives
// the largest sorted run fewer bits than the average and times the
// listener.
// With the listener (made in code) and without it (the model tree), the
// universal tree's largest run gets fewer bits per key than the average.
TEST(CompareToolTest, UniversalTreeSettlesAndSizesItsRuns) {
  for (const std::string configure : {"code", "no_listener"}) {
    SCOPED_TRACE(configure);
    ScratchDir dir;
    const fs::path out = dir.path() / "out";
    const ToolResult r = RunTool(
        dir,
        {"--engines=rocksdb", "--tree=natural", "--compaction=universal",
         "--num=20000", "--reads=2000", "--phase_seconds=0", "--phases=absent",
         "--policies=ribbon:10:by_level", "--configure=" + configure,
         "--out=" + out.string(), "--progress=false"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json doc = json::parse(ReadFile(out / "results.json"));
    const json& build = doc["runs"][0]["build"];
    // The time inside the listener's planning; none without a listener.
    if (configure == "code") {
      EXPECT_GT(build["listener_s"].get<double>(), 0);
    } else {
      EXPECT_TRUE(build["listener_s"].is_null()) << build["listener_s"];
    }
    std::map<int, std::pair<uint64_t, uint64_t>> runs;  // level: keys, bytes
    uint64_t entries = 0;
    for (const json& t : build["tables"]) {
      entries += t[1].get<uint64_t>();
      runs[t[0].get<int>()].first += t[1].get<uint64_t>();
      runs[t[0].get<int>()].second += t[2].get<uint64_t>();
    }
    EXPECT_EQ(entries, 20000u);
    ASSERT_GE(runs.size(), 2u);
    const auto largest = std::max_element(
        runs.begin(), runs.end(), [](const auto& a, const auto& b) {
          return a.second.first < b.second.first;
        });
    EXPECT_LT(8.0 * static_cast<double>(largest->second.second) /
                  static_cast<double>(largest->second.first),
              build["bits_per_key_disk"].get<double>());
    // The information bound counts the same sorted runs (H > 0: two or
    // more). Its ratio is not checked here: ~4 reads are due in 2,000
    // Gets, and the tree this compaction settles on varies from machine to
    // machine.
    const double h = SortedRunEntropy(build["tables"]);
    EXPECT_GT(h, 0);
    EXPECT_NEAR(build["run_entropy"].get<double>(), h, 1e-9);
    EXPECT_TRUE(doc["runs"][0]["phases"][0]["ratio_vs_bound"].is_number());
    const std::string text = ReadFile(out / "results.txt");
    EXPECT_NE(text.find("universal compaction"), std::string::npos);
    EXPECT_EQ(text.find("no level listener (model trees)") != std::string::npos,
              configure == "no_listener");
  }
}

// Keyed specs run with the tool's random secret on both engines, and their
// filters work: about the unkeyed twin's false positives, none skipped.
TEST(CompareToolTest, KeyedSpecsRunWithTheToolsSecret) {
  ScratchDir dir;
  const fs::path out = dir.path() / "out";
  const ToolResult r =
      RunTool(dir, {"--engines=rocksdb,leveldb", "--num=20000", "--reads=4000",
                    "--phases=absent", "--phase_seconds=0",
                    "--policies=blocked_bloom:10,blocked_bloom:10:keyed:salt",
                    "--out=" + out.string(), "--progress=false"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("Skipped"), std::string::npos) << r.out;
  const json doc = json::parse(ReadFile(out / "results.json"));
  ASSERT_EQ(doc["runs"].size(), 4u);
  for (const json& run : doc["runs"]) {
    SCOPED_TRACE(run["engine"].get<std::string>() + " " +
                 run["policy"].get<std::string>());
    EXPECT_FALSE(run["skipped"].get<bool>());
    const json& absent = run["phases"][0];
    // 4,000 absent keys at ~1% FPR per table probed: far below 0.1 reads
    // per Get; with no filter working it would be about one.
    EXPECT_LT(absent["reads_per_op"].get<double>(), 0.1);
    ASSERT_TRUE(absent["fpr"].is_number());
    // Every Get probed a filter; the FPR within twice blocked_bloom:10's
    // expected rate (~1%) plus 5 sigma of the probes.
    EXPECT_GE(absent["probes_per_op"].get<double>(), 1.0);
    FilterSpec spec;
    FilterParams p;
    ASSERT_TRUE(ParseFilterSpec("blocked_bloom:10", &spec).ok());
    ASSERT_TRUE(ParamsForSpec(spec, 20000, &p).ok());
    EXPECT_LE(
        absent["fpr"].get<double>(),
        2 * p.expected_fpr +
            5 * std::sqrt(p.expected_fpr / absent["probes"].get<double>()));
  }
}

// The absent-key reads per Get of a run in results.json.
double AbsentReads(const json& run) {
  for (const json& p : run["phases"]) {
    if (p["phase"] == "absent") return p["reads_per_op"].get<double>();
  }
  ADD_FAILURE() << run["policy"] << " has no absent phase";
  return -1;
}

bool IsBuiltin(const json& run) {
  const std::string family = run["family"];
  return family.rfind("rocksdb:", 0) == 0 || family.rfind("leveldb:", 0) == 0;
}

const json* FindRun(const json& doc, const std::string& engine,
                    const std::string& policy) {
  for (const json& run : doc["runs"]) {
    if (run["engine"] == engine && run["policy"] == policy) return &run;
  }
  return nullptr;
}

// The verdict of `engine` worked out again from the runs: over the X@Y
// pairs of one sstfilter policy and one built-in, our policy whose absent
// reads are the lowest multiple of the strongest built-in's at its memory.
struct Expected {
  const json* ours = nullptr;
  const json* rival = nullptr;
  double ratio = 0;
};
Expected ExpectedVerdict(const json& doc, const std::string& engine) {
  std::vector<std::pair<const json*, const json*>> pairs;  // ours, built-in
  for (const json& x : doc["runs"]) {
    if (x["engine"] != engine || x["reference"] == "") continue;
    const json* y = FindRun(doc, engine, x["reference"]);
    if (y == nullptr || IsBuiltin(x) == IsBuiltin(*y)) continue;
    pairs.push_back(IsBuiltin(x) ? std::make_pair(y, &x)
                                 : std::make_pair(&x, y));
  }
  Expected best;
  for (const auto& [ours, unused] : pairs) {
    const json* rival = nullptr;
    for (const auto& [o, b] : pairs) {
      if (o == ours &&
          (rival == nullptr || AbsentReads(*b) < AbsentReads(*rival))) {
        rival = b;
      }
    }
    const double ratio = AbsentReads(*ours) / AbsentReads(*rival);
    if (best.ours == nullptr || ratio < best.ratio) best = {ours, rival, ratio};
  }
  return best;
}

// The default policies answer "which filter should I use?": the ribbon
// kind uniform and by_level beside RocksDB's Ribbon at their memory, and
// beside LevelDB's Bloom at its bytes; the run ends with one line per
// engine naming the winner, the reads ratio and the cost ratios (latency,
// build time), which the runs reproduce.
TEST(CompareToolTest, DefaultRunEndsWithAVerdictPerEngine) {
  ScratchDir dir;
  const fs::path out = dir.path() / "out";
  const ToolResult r = RunTool(
      dir, {"--num=20000", "--reads=10000", "--phase_seconds=0",
            "--phases=absent", "--out=" + out.string(), "--progress=false"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = json::parse(ReadFile(out / "results.json"));
  for (const json& run : doc["runs"]) EXPECT_FALSE(run["skipped"].get<bool>());
  for (const char* policy :
       {"rocksdb:bloom:10", "ribbon:10", "rocksdb:ribbon@ribbon:10",
        "ribbon:10:by_level", "rocksdb:ribbon@ribbon:10:by_level",
        "rocksdb:bloom@ribbon:10:by_level"}) {
    EXPECT_NE(FindRun(doc, "rocksdb", policy), nullptr) << policy;
  }
  for (const char* policy : {"leveldb:bloom:10", "ribbon@leveldb:bloom:10"}) {
    EXPECT_NE(FindRun(doc, "leveldb", policy), nullptr) << policy;
  }

  // by_level planned from the tree: its L0 tables (0.9% of the keys) get
  // ~1.8x the bits per key of L3 (89%), which gets less than 10.
  const json* by_level = FindRun(doc, "rocksdb", "ribbon:10:by_level");
  ASSERT_NE(by_level, nullptr);
  std::map<int, std::pair<double, double>> level_keys_bytes;
  for (const json& t : (*by_level)["build"]["tables"]) {
    level_keys_bytes[t[0].get<int>()].first += t[1].get<double>();
    level_keys_bytes[t[0].get<int>()].second += t[2].get<double>();
  }
  auto bits = [&](int level) {
    const auto& [keys, bytes] = level_keys_bytes[level];
    return keys > 0 ? 8 * bytes / keys : 0;
  };
  EXPECT_GT(bits(0), 1.4 * bits(3));
  EXPECT_LT(bits(3), 10);

  // Its absent reads over the information bound 2^-(b - H) of its tree (H:
  // the entropy of the sorted runs' key shares, each L0 table a run and
  // each level one), as recomputed here, in results.json and in the text.
  // The bound is ~0.0015 reads per Get (b ~10, H ~0.6), i.e. ~15 reads in
  // these 10,000 Gets at 1.0x: a Poisson count whose sampling noise (~25%)
  // could put a filter at the limit below 1.0x, so the check is a window,
  // not >= 1. By_level's plan is ~1.2-1.5x; below 0.5x (<= 7 reads where
  // >= 15 are due) or above 3x is a wrong formula or a plan gone wrong, not
  // chance; and the count repeats exactly (fixed seed, no time limit).
  const json& build = (*by_level)["build"];
  const double h = SortedRunEntropy(build["tables"]);
  EXPECT_NEAR(build["run_entropy"].get<double>(), h, 1e-9);
  const double bound = std::exp2(h - build["bits_per_key_disk"].get<double>());
  EXPECT_NEAR(build["absent_reads_bound"].get<double>(), bound, 1e-12);
  const json* absent =
      FindPhase(doc, "rocksdb", "ribbon:10:by_level", "absent");
  ASSERT_NE(absent, nullptr);
  const double vs_bound = (*absent)["reads_per_op"].get<double>() / bound;
  EXPECT_NEAR((*absent)["ratio_vs_bound"].get<double>(), vs_bound, 1e-6);
  EXPECT_GT(vs_bound, 0.5);
  EXPECT_LT(vs_bound, 3.0);
  // RocksDB's Ribbon at its memory, with no plan for the tree, is farther.
  const json* rival =
      FindPhase(doc, "rocksdb", "rocksdb:ribbon@ribbon:10:by_level", "absent");
  ASSERT_NE(rival, nullptr);
  EXPECT_GT((*rival)["ratio_vs_bound"].get<double>(), vs_bound);
  // LevelDB: the tool counts each table's entries for the bound. Its
  // bits/key hold 4-byte offsets and a header per ~33-key filter, so its
  // Bloom (193 reads here) is far above the bound.
  const json* leveldb = FindRun(doc, "leveldb", "leveldb:bloom:10");
  ASSERT_NE(leveldb, nullptr);
  EXPECT_GT((*leveldb)["build"]["run_entropy"].get<double>(), 0)
      << (*leveldb)["build"]["run_entropy"];
  const json* leveldb_absent =
      FindPhase(doc, "leveldb", "leveldb:bloom:10", "absent");
  ASSERT_NE(leveldb_absent, nullptr);
  EXPECT_GT((*leveldb_absent)["ratio_vs_bound"].get<double>(), 1);

  // One verdict line per engine ends the table, as results.json has them.
  const std::string text = ReadFile(out / "results.txt");
  for (const auto& row : TextTable(text, "Lookups")) {
    if (row.at("engine") == "rocksdb" &&
        row.at("policy") == "ribbon:10:by_level") {
      ExpectRounded(row.at("x bound"), vs_bound, 2, "x bound");
    }
  }
  const std::vector<std::string> lines = Lines(text);
  ASSERT_GE(lines.size(), 3u);
  ASSERT_EQ(lines[lines.size() - 3].rfind("Verdict", 0), 0u) << text;
  ASSERT_EQ(doc["verdicts"].size(), 2u);
  const char* const kTitles[] = {"RocksDB: ", "LevelDB: "};
  const char* const kRivals[] = {"RocksDB's Ribbon", "LevelDB's Bloom"};
  for (size_t i = 0; i < 2; i++) {
    const json& v = doc["verdicts"][i];
    const std::string line = lines[lines.size() - 2 + i];
    SCOPED_TRACE(line);
    EXPECT_EQ(line, v["text"]);
    const Expected e = ExpectedVerdict(doc, v["engine"]);
    ASSERT_NE(e.ours, nullptr);
    EXPECT_EQ(v["ours"], (*e.ours)["policy"]);
    EXPECT_EQ(v["rival"], (*e.rival)["policy"]);
    EXPECT_DOUBLE_EQ(v["ratio"].get<double>(), e.ratio);
    // Equal memory: the built-in's filter bytes within 3% of ours. In
    // LevelDB (filters of ~33 keys) the ribbon kind's dense form keeps its
    // spec's FPR with whole columns, so its bytes move in steps of about a
    // bit per key: ours is then the largest spec within the rival's bytes,
    // up to 6% under them.
    const double bytes_ratio =
        (*e.rival)["build"]["filter_bytes"].get<double>() /
        (*e.ours)["build"]["filter_bytes"].get<double>();
    EXPECT_DOUBLE_EQ(v["bytes_ratio"].get<double>(), bytes_ratio);
    if (i == 0) {
      EXPECT_NEAR(bytes_ratio, 1.0, 0.03);
    } else {
      EXPECT_GE(bytes_ratio, 0.97);
      EXPECT_LE(bytes_ratio, 1.06);
    }
    // Ours wins on both engines (deterministic counts: fixed seed, no time
    // limit): RocksDB ~0.5-0.7x Ribbon's reads, LevelDB ~0.2x its Bloom's.
    // Ours is named with the filter the tool sized, if it did.
    const std::string label = (*e.ours)["policy"], filter = (*e.ours)["filter"];
    const std::string ours =
        label == filter ? label : label + " (" + filter + ")";
    char ratio[32];
    std::snprintf(ratio, sizeof(ratio), "%.2fx ", e.ratio);
    EXPECT_EQ(line.rfind(kTitles[i] + ours + " reads " + ratio + kRivals[i] +
                             "'s absent-key reads at equal memory (",
                         0),
              0u);
    EXPECT_LT(e.ratio, i == 0 ? 1.0 : 0.45);

    // Beside the reads, what ours costs against the same rival: the absent
    // phase's p50 and p99 per Get and the filter build time of the load,
    // ours over the rival's, computed from the runs' rows.
    const json* pa = FindPhase(doc, v["engine"], (*e.ours)["policy"], "absent");
    const json* pb =
        FindPhase(doc, v["engine"], (*e.rival)["policy"], "absent");
    ASSERT_NE(pa, nullptr);
    ASSERT_NE(pb, nullptr);
    const double p50 =
        (*pa)["p50_us"].get<double>() / (*pb)["p50_us"].get<double>();
    const double p99 =
        (*pa)["p99_us"].get<double>() / (*pb)["p99_us"].get<double>();
    const double ours_build = (*e.ours)["build"]["filter_build_s"];
    const double rival_build = (*e.rival)["build"]["filter_build_s"];
    ASSERT_GT(rival_build, 0);
    EXPECT_DOUBLE_EQ(v["p50_ratio"].get<double>(), p50);
    EXPECT_DOUBLE_EQ(v["p99_ratio"].get<double>(), p99);
    EXPECT_DOUBLE_EQ(v["build_ratio"].get<double>(), ours_build / rival_build);
    char cost[256];
    std::snprintf(cost, sizeof(cost),
                  "; cost beside %s: absent-Get latency p50 %.2fx, p99 "
                  "%.2fx, filter build %.2fx (%.3g s against %.3g s in the "
                  "load)",
                  kRivals[i], p50, p99, ours_build / rival_build, ours_build,
                  rival_build);
    ASSERT_GE(line.size(), std::strlen(cost));
    EXPECT_EQ(line.substr(line.size() - std::strlen(cost)), cost);
    // The cost follows the equal-memory counts and both runs' reads over
    // the information bound.
    char bound_text[128];
    std::snprintf(bound_text, sizeof(bound_text),
                  "; %.2fx and %.2fx the information bound)",
                  (*pa)["ratio_vs_bound"].get<double>(),
                  (*pb)["ratio_vs_bound"].get<double>());
    EXPECT_NE(line.find(" absent Gets each" + std::string(bound_text) +
                        std::string(cost)),
              std::string::npos);
  }
  // Our best by reads is one of the tree-planned specs: ribbon by level,
  // or auto, which plans kinds and bits on the same tree.
  const std::string rocksdb_best = doc["verdicts"][0]["ours"];
  EXPECT_TRUE(rocksdb_best == "ribbon:10:by_level" || rocksdb_best == "auto:10")
      << rocksdb_best;
  const std::string leveldb_best = doc["verdicts"][1]["ours"];
  EXPECT_TRUE(leveldb_best == "ribbon@leveldb:bloom:10" ||
              leveldb_best == "auto@leveldb:bloom:10")
      << leveldb_best;
}

}  // namespace
}  // namespace sstfilter

namespace sstfilter {
namespace {

double Counter(const json& engine, const std::string& name) {
  return engine.contains(name) ? engine[name].get<double>() : 0;
}

// --memory on small databases of both engines (7.4 MB of tables at a 500 KB
// budget): every phase runs (load, warm-up, measured Gets) for each policy
// and workload; no present key is missed (the tool stops on one); the
// table-file reads it counts equal RocksDB's own block reads (perf
// context) and block cache misses (statistics), and its hits RocksDB's;
// LevelDB's reads are data blocks; at 90% absent Gets a filter saves most
// reads; the cache is full and within its budget. A budget RocksDB's index
// cannot fit in, or one the database is not 8 times, is refused.
TEST(CompareToolTest, MemoryModeRunsEveryPhaseThroughOneBlockCache) {
  ScratchDir dir;
  const fs::path out = dir.path() / "out";
  const std::vector<std::string> common = {
      "--memory=500KB",    "--num=60000",      "--reads=3000",
      "--phase_seconds=0", "--progress=false", "--absent_share=0.9"};
  std::vector<std::string> args = common;
  args.insert(args.end(),
              {"--key_dist=uniform,zipf:0.99", "--engines=rocksdb,leveldb",
               "--policies=none,rocksdb:bloom:10,leveldb:bloom:10,ribbon:10",
               "--out=" + out.string()});
  const ToolResult r = RunTool(dir, args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(ReadFile(out / "results.json"));
  EXPECT_EQ(j["workload"], "memory");
  ASSERT_EQ(j["workloads"].size(), 2u);
  ASSERT_EQ(j["runs"].size(), 6u);
  // Per engine and label, per workload.
  std::map<std::string, std::vector<double>> reads;
  for (const json& run : j["runs"]) {
    const std::string name = run["engine"].get<std::string>() + " " +
                             run["label"].get<std::string>();
    const bool rocksdb = run["engine"] == "rocksdb";
    SCOPED_TRACE(name);
    ASSERT_EQ(run["points"].size(), 2u);
    EXPECT_GE(run["table_bytes"].get<double>(), 8 * 0.5e6);
    for (const json& p : run["points"]) {
      SCOPED_TRACE(p["workload"].get<std::string>());
      EXPECT_EQ(p["gets"], 3000);
      // 10% present keys, every one found: 300 +- 4.5 sigma (16.4).
      EXPECT_NEAR(p["found"].get<double>(), 300, 74);
      EXPECT_GE(p["warmup_gets"].get<double>(), 4000);  // 2 steps of 2,000
      EXPECT_LE(p["cache_bytes"].get<double>(), 0.51e6);
      EXPECT_GE(p["cache_bytes"].get<double>(), 0.45e6);
      reads[name].push_back(p["reads_per_get"].get<double>());
      if (!rocksdb) {
        EXPECT_EQ(p["data_reads_per_get"], p["reads_per_get"]);
        EXPECT_EQ(p["hit_rate_data"], -1);  // LevelDB counts no hits
        continue;
      }
      const json& e = p["engine"];
      const double counted = p["reads_per_get"].get<double>() * 3000;
      const double blocks = Counter(e, "perf.block_read_count");
      double misses = 0, hits = 0;
      for (const char* type : {"DATA", "INDEX", "FILTER"}) {
        misses +=
            Counter(e, std::string("ticker.BLOCK_CACHE_") + type + "_MISS");
        hits += Counter(e, std::string("ticker.BLOCK_CACHE_") + type + "_HIT");
      }
      EXPECT_NEAR(counted, blocks, 0.5);
      EXPECT_EQ(blocks, misses);
      EXPECT_EQ(hits, Counter(e, "perf.block_cache_hit_count"));
      EXPECT_GT(hits, 3000);  // at least the index of every Get
      EXPECT_NEAR(p["data_reads_per_get"].get<double>() +
                      p["index_reads_per_get"].get<double>() +
                      p["filter_reads_per_get"].get<double>(),
                  p["reads_per_get"].get<double>(), 1e-9);
    }
  }
  for (size_t w = 0; w < 2; w++) {
    // No filter: about 1.5 reads per Get (an absent key's data block in
    // each of the levels its key range falls in, mostly missed); a filter:
    // the 10% present keys' data blocks and a few false positives, ~0.1.
    // LevelDB without a filter: a data block in every table whose range
    // holds the key (L0 files and each level), ~3.5.
    EXPECT_GT(reads["rocksdb none"][w], 0.8);
    EXPECT_GT(reads["leveldb none"][w], 2);
    for (const char* filtered :
         {"rocksdb rocksdb:bloom:10", "rocksdb ribbon:10",
          "leveldb leveldb:bloom:10", "leveldb ribbon:10"}) {
      SCOPED_TRACE(filtered);
      ASSERT_EQ(reads[filtered].size(), 2u);
      EXPECT_LT(reads[filtered][w], 0.2);
    }
  }
  const std::string text = ReadFile(out / "results.txt");
  EXPECT_NE(text.find("Workload 2: 0.5 MiB, absent 0.9, zipf:0.99"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Verdict: rocksdb: fastest for the budget: "),
            std::string::npos);
  EXPECT_NE(text.find("Verdict: leveldb: fastest for the budget: "),
            std::string::npos);
  // --partitioned: the tables have two-level indexes (a top level smaller
  // than the whole index) and partitioned filters, which still save reads.
  {
    const fs::path part = dir.path() / "partitioned";
    std::vector<std::string> p = common;
    p.insert(p.end(), {"--partitioned", "--policies=ribbon:10",
                       "--out=" + part.string()});
    const ToolResult pr = RunTool(dir, p);
    ASSERT_EQ(pr.exit_code, 0) << pr.err;
    const json pj = json::parse(ReadFile(part / "results.json"));
    const json& run = pj["runs"][0];
    EXPECT_GT(run["top_level_index_bytes"].get<double>(), 0);
    EXPECT_LT(run["top_level_index_bytes"].get<double>(),
              run["index_bytes"].get<double>() / 4);
    EXPECT_LT(run["points"][0]["reads_per_get"].get<double>(), 0.3);
  }

  // Budgets the mode refuses, before any Get: one the index blocks do not
  // fit in (60,000 keys: ~25 KB of index), one the database is not 8x.
  for (const auto& [memory, message] :
       std::vector<std::pair<std::string, std::string>>{
           {"--memory=8KB", "smaller than the index blocks"},
           {"--memory=2MB", "the mode needs at least 8x"}}) {
    SCOPED_TRACE(memory);
    std::vector<std::string> bad = common;
    bad.push_back("--policies=none");
    bad.push_back(memory);
    const ToolResult b = RunTool(dir, bad);
    EXPECT_EQ(b.exit_code, 1);
    EXPECT_NE(b.err.find(message), std::string::npos) << b.err;
    EXPECT_EQ(b.out.find("Workload"), std::string::npos);
  }
}

}  // namespace
}  // namespace sstfilter
