// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The plugin in RocksDB's own, unmodified tools: /usr/bin/db_bench with
// libsstfilter_rocksdb_plugin.so in LD_PRELOAD and an OPTIONS file naming
// an sstfilter id uses our filter (its statistics and sst_dump say so);
// without the plugin the same OPTIONS file silently gives no filter, and
// `ldb compact` rewrites files without one -- the hazard docs/ROCKSDB.md
// warns about, pinned here.
//
// Paths come from the build (tests/CMakeLists.txt): the plugin, the tools
// (skipped if not installed), and for sanitized builds the sanitizer
// runtimes that must precede an instrumented plugin in LD_PRELOAD.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "sstfilter/params.h"
#include "tests/rocksdb_test_util.h"
#include "tests/test_util.h"

#ifndef SSTFILTER_ROCKSDB_PLUGIN
#error "SSTFILTER_ROCKSDB_PLUGIN (path of the plugin) must be defined"
#endif
#ifndef SSTFILTER_DB_BENCH
#define SSTFILTER_DB_BENCH ""
#endif
#ifndef SSTFILTER_SST_DUMP
#define SSTFILTER_SST_DUMP ""
#endif
#ifndef SSTFILTER_LDB
#define SSTFILTER_LDB ""
#endif
#ifndef SSTFILTER_SANITIZER_PRELOAD
#define SSTFILTER_SANITIZER_PRELOAD ""
#endif

namespace sstfilter {
namespace {

struct Result {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// Runs `command` through the shell, with the plugin preloaded or not.
Result RunTool(const std::string& command, bool with_plugin) {
  std::string env;
  if (with_plugin) {
    std::string preload = SSTFILTER_SANITIZER_PRELOAD;
    if (!preload.empty()) preload += ":";
    preload += SSTFILTER_ROCKSDB_PLUGIN;
    // An instrumented plugin in an uninstrumented tool: the tool's own
    // allocations are not ours to judge for leaks.
    env = "LD_PRELOAD='" + preload + "' ASAN_OPTIONS=detect_leaks=0 ";
  } else {
    env = "env -u LD_PRELOAD ";
  }
  Result r;
  FILE* p = popen((env + command + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.output.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// "rocksdb.bloom.filter.useful COUNT : 123" -> {"rocksdb.bloom.filter.useful",
// 123}
std::map<std::string, uint64_t> Tickers(const std::string& output) {
  std::map<std::string, uint64_t> t;
  size_t pos = 0;
  while ((pos = output.find("rocksdb.", pos)) != std::string::npos) {
    const size_t eol = output.find('\n', pos);
    const std::string line = output.substr(pos, eol - pos);
    pos = eol;
    const size_t count = line.find(" COUNT : ");
    if (count == std::string::npos) continue;
    t[line.substr(0, count)] = std::stoull(line.substr(count + 9));
  }
  return t;
}

// db_bench's filter statistics: how many absent-key probes the filter
// answered alone (useful), and the FPR of the probes of absent keys: the
// rejected ones plus the false positives.
struct FilterStats {
  uint64_t useful = 0;
  double fpr = 0;
};
FilterStats DbBenchFilterStats(const std::string& output) {
  auto t = Tickers(output);
  FilterStats s;
  s.useful = t["rocksdb.bloom.filter.useful"];
  const uint64_t positive = t["rocksdb.bloom.filter.full.positive"];
  const uint64_t true_positive = t["rocksdb.bloom.filter.full.true.positive"];
  s.fpr = static_cast<double>(positive - true_positive) /
          (s.useful + positive - true_positive);
  return s;
}

constexpr int kNum = 20000;

// The filter answered db_bench's absent reads: about 1/e of kNum reads are
// of absent keys (fillrandom draws kNum keys of kNum with repeats), each
// probing one filter per table it may be in (~32,000 probes for 20,000
// reads here), so at least 0.3 kNum probes were rejected by a filter; the
// FPR of those probes is within twice the spec's expected FPR (at the
// ~4,000 keys of a flushed file) plus 5 sigma.
void ExpectFilterUsed(const std::string& spec, const FilterStats& s) {
  const double expected = test::ExpectedFpr(spec, 4000);
  const double probes = s.useful / (1 - s.fpr);
  EXPECT_GE(s.useful, 0.3 * kNum) << spec;
  EXPECT_LE(s.fpr, 2 * expected + 5 * std::sqrt(expected / probes))
      << spec << ": expected " << expected;
}

// An OPTIONS file with the filter policy `id`, `db_lines` in [DBOptions]
// and `cf_lines` in [CFOptions "default"] (each line "  name=value\n").
std::string WriteOptionsFile(
    const test::ScratchDir& dir, const std::string& id,
    const std::string& db_lines = "",
    const std::string& cf_lines = "  write_buffer_size=1048576\n") {
  const std::string path = dir.Sub("OPTIONS.ini");
  std::ofstream f(path);
  f << "[Version]\n"
       "  rocksdb_version=7.8.3\n"
       "  options_file_version=1.1\n"
       "\n"
       "[DBOptions]\n"
       "  create_if_missing=true\n"
    << db_lines
    << "\n"
       "[CFOptions \"default\"]\n"
    << cf_lines
    << "  compression=kNoCompression\n"
       "\n"
       "[TableOptions/BlockBasedTable \"default\"]\n"
       "  filter_policy="
    << id << "\n";
  return path;
}

std::string DbBench(const std::string& db, const std::string& options_file) {
  return std::string(SSTFILTER_DB_BENCH) + " --db=" + db +
         " --options_file=" + options_file +
         " --benchmarks=fillrandom,flush,readrandom --num=" +
         std::to_string(kNum) + " --reads=" + std::to_string(kNum) +
         " --statistics --seed=42 --threads=1";
}

class RocksDBToolsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (std::string(SSTFILTER_DB_BENCH).empty() ||
        std::string(SSTFILTER_SST_DUMP).empty()) {
      GTEST_SKIP()
          << "db_bench or sst_dump not installed (Debian: rocksdb-tools)";
    }
  }
  std::string Id() const { return kRocksDBIdPrefix + GetParam(); }
  std::string KindName() const {
    return kRocksDBIdPrefix +
           std::string(FilterKindName(test::MustParse(GetParam()).kind));
  }
};

TEST_P(RocksDBToolsTest, DbBenchWithPluginUsesOurFilter) {
  test::ScratchDir dir;
  const std::string db = dir.Sub("db");
  const Result r = RunTool(DbBench(db, WriteOptionsFile(dir, Id())), true);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto [useful, fpr] = DbBenchFilterStats(r.output);
  std::printf("  db_bench %s: useful %llu, FPR %.3f%%\n", Id().c_str(),
              static_cast<unsigned long long>(useful), 100 * fpr);
  ExpectFilterUsed(GetParam(), {useful, fpr});

  // sst_dump (no plugin needed to read properties) names our policy.
  const Result dump = RunTool(
      std::string(SSTFILTER_SST_DUMP) + " --file=" + db + " --show_properties",
      false);
  ASSERT_EQ(dump.exit_code, 0) << dump.output;
  EXPECT_NE(dump.output.find("filter policy name: " + KindName()),
            std::string::npos)
      << dump.output;
}

TEST_P(RocksDBToolsTest, DbBenchWithoutPluginSilentlyHasNoFilter) {
  test::ScratchDir dir;
  const Result r =
      RunTool(DbBench(dir.Sub("db"), WriteOptionsFile(dir, Id())), false);
  ASSERT_EQ(r.exit_code, 0) << r.output;  // no error: that is the hazard
  EXPECT_EQ(Tickers(r.output)["rocksdb.bloom.filter.useful"], 0u);
}

TEST_P(RocksDBToolsTest, LdbCompactKeepsOurFilterOnlyWithThePlugin) {
  if (std::string(SSTFILTER_LDB).empty()) GTEST_SKIP() << "ldb not installed";
  test::ScratchDir dir;
  const std::string db = dir.Sub("db");
  ASSERT_EQ(RunTool(DbBench(db, WriteOptionsFile(dir, Id())), true).exit_code,
            0);
  auto policy_name = [&]() {
    const Result dump = RunTool(std::string(SSTFILTER_SST_DUMP) +
                                    " --file=" + db + " --show_properties",
                                false);
    const size_t at = dump.output.find("filter policy name: ");
    if (at == std::string::npos) return std::string("?");
    const size_t from = at + 20;
    return dump.output.substr(from, dump.output.find('\n', from) - from);
  };
  ASSERT_EQ(policy_name(), KindName());
  const std::string compact =
      std::string(SSTFILTER_LDB) + " --db=" + db + " compact";
  Result r = RunTool(compact, true);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(policy_name(), KindName());
  r = RunTool(compact, false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(policy_name(), "N/A")
      << "ldb without the plugin dropped the filter";
}

// A keyed spec in an OPTIONS file: the plugin reads the secret from the
// file named by SSTFILTER_SECRET_FILE, and db_bench filters.
TEST_P(RocksDBToolsTest, DbBenchKeyedReadsTheSecretFile) {
  test::ScratchDir dir;
  const std::string secret = dir.Sub("secret");
  std::ofstream(secret) << "db_bench keyed secret, 32 bytes.";
  const std::string options = WriteOptionsFile(dir, Id() + ":keyed:salt");
  const Result r = RunTool(
      "SSTFILTER_SECRET_FILE=" + secret + " " + DbBench(dir.Sub("db"), options),
      true);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto [useful, fpr] = DbBenchFilterStats(r.output);
  std::printf("  db_bench %s:keyed:salt: useful %llu, FPR %.3f%%\n",
              Id().c_str(), static_cast<unsigned long long>(useful), 100 * fpr);
  ExpectFilterUsed(GetParam(), {useful, fpr});

  // Without the variable the policy cannot be made. RocksDB 7.8 ignores
  // that error in an OPTIONS file (docs/ROCKSDB.md): no filter, never a
  // filter built with a wrong or missing secret.
  const Result none = RunTool(
      "env -u SSTFILTER_SECRET_FILE " + DbBench(dir.Sub("db2"), options), true);
  if (none.exit_code == 0) {
    EXPECT_EQ(Tickers(none.output)["rocksdb.bloom.filter.useful"], 0u);
  }
  // ... but not silently: the plugin says why on stderr.
  EXPECT_NE(none.output.find("SSTFILTER_SECRET_FILE"), std::string::npos)
      << none.output;
  std::printf("  db_bench without SSTFILTER_SECRET_FILE: exit %d\n",
              none.exit_code);
}

// The filters of every table of `db` (sst_dump's "# entries for filter" and
// "filter block size"): their bits over those of `spec`'s uniform filters.
double FilterBitsOverUniform(const std::string& db, const std::string& spec) {
  const Result dump = RunTool(
      std::string(SSTFILTER_SST_DUMP) + " --file=" + db + " --show_properties",
      false);
  EXPECT_EQ(dump.exit_code, 0) << dump.output;
  FilterSpec uniform = test::MustParse(spec);
  uniform.by_level = false;
  double bits = 0, uniform_bits = 0;
  const std::string size_tag = "filter block size: ";
  const std::string entries_tag = "# entries for filter: ";
  for (size_t at = dump.output.find(size_tag); at != std::string::npos;
       at = dump.output.find(size_tag, at + 1)) {
    const size_t e = dump.output.find(entries_tag, at);
    if (e == std::string::npos) break;
    bits += 8.0 * std::stod(dump.output.substr(at + size_tag.size()));
    FilterParams p;
    EXPECT_TRUE(ParamsForSpec(
                    uniform,
                    std::stoull(dump.output.substr(e + entries_tag.size())), &p)
                    .ok());
    uniform_bits += 8.0 * static_cast<double>(p.filter_bytes);
  }
  EXPECT_GT(uniform_bits, 0) << dump.output;
  return bits / uniform_bits;
}

// by_level in the stock db_bench with no code: the listener line of
// docs/ROCKSDB.md in the OPTIONS file. On a tree RocksDB shapes (small
// files and levels, automatic compactions), the filters spend the spec's
// bits per key within a few percent (measured 0.95-1.00; the model tree of
// a run without the line: 1.04-1.13), and the LOG says that the listener
// is attached and plans them. Without the line the LOG says how to add it.
TEST(RocksDBToolsByLevelTest, DbBenchWithTheListenerLine) {
  if (std::string(SSTFILTER_DB_BENCH).empty() ||
      std::string(SSTFILTER_SST_DUMP).empty()) {
    GTEST_SKIP()
        << "db_bench or sst_dump not installed (Debian: rocksdb-tools)";
  }
  const std::string spec = "ribbon:10:by_level";
  for (const bool listener : {true, false}) {
    SCOPED_TRACE(listener);
    test::ScratchDir dir;
    const std::string db = dir.Sub("db");
    const std::string options = WriteOptionsFile(
        dir, kRocksDBIdPrefix + spec,
        listener ? "  listeners={sstfilter.level_listener}\n" : "",
        "  write_buffer_size=262144\n"
        "  target_file_size_base=262144\n"
        "  max_bytes_for_level_base=1048576\n");
    const Result r = RunTool(
        std::string(SSTFILTER_DB_BENCH) + " --db=" + db +
            " --options_file=" + options +
            " --benchmarks=fillrandom,waitforcompaction,readrandom"
            " --num=100000 --reads=10000 --statistics --seed=42 --threads=1",
        true);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_GT(DbBenchFilterStats(r.output).useful, 0u) << r.output;
    std::ifstream log_file(db + "/LOG");
    const std::string log((std::istreambuf_iterator<char>(log_file)),
                          std::istreambuf_iterator<char>());
    const bool planned =
        log.find("[sstfilter] sstfilter." + spec +
                 ": column family \"default\" sizes its filters on the tree "
                 "that the level listener") != std::string::npos;
    const bool warned =
        log.find("no level listener follows") != std::string::npos;
    const bool attached =
        log.find(
            "[sstfilter] the level listener (sstfilter.level_listener) "
            "is attached to this database") != std::string::npos;
    EXPECT_EQ(planned, listener);
    EXPECT_EQ(warned, !listener);
    EXPECT_EQ(attached, listener);
    const double spend = FilterBitsOverUniform(db, spec);
    std::printf("  db_bench %s, listener %d: filter bits over uniform's %.4f\n",
                spec.c_str(), listener, spend);
    if (listener) {
      // Never more than uniform's memory. Below it by up to 10% on this
      // small tree: with the segmented ribbon form the plan undershoots
      // (0.94-0.95 measured; 0.98 with the banded form), docs/LEVEL_SIZING.md.
      EXPECT_LE(spend, 1.02);
      EXPECT_GE(spend, 0.90);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllKinds, RocksDBToolsTest,
                         ::testing::ValuesIn(test::AllKindSpecs()),
                         test::SpecName);

}  // namespace
}  // namespace sstfilter
