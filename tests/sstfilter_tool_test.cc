// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The `sstfilter` command, run as a user runs it: the built binary
// (SSTFILTER_TOOL_PATH) in a shell, checking its output and exit status.
// inspect reads SST files written here with rocksdb::SstFileWriter.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <string>

#include "adapters/rocksdb/rocksdb_compat.h"
#include "sstfilter/filter.h"
#include "sstfilter/mutable.h"
#include "sstfilter/params.h"
#include "sstfilter/range.h"
#include "sstfilter/secret.h"
#include "sstfilter/spec.h"
#include "tests/test_util.h"

#if SSTFILTER_TOOL_TEST_ROCKSDB
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/table.h>
#endif
#if SSTFILTER_TOOL_TEST_ADAPTER
#include <rocksdb/db.h>

#include "sstfilter/rocksdb.h"
#endif
#if SSTFILTER_TOOL_TEST_LEVELDB
#include <leveldb/db.h>
#include <leveldb/filter_policy.h>

#include <filesystem>

#include "sstfilter/leveldb.h"
#endif

namespace sstfilter {
namespace {

struct Result {
  int exit_code = -1;
  std::string out, err;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A file name unique to the running test (ctest runs tests in parallel).
std::string Scratch(const std::string& name) {
  return ::testing::TempDir() + "sstfilter_tool_test_" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
         name;
}

// Runs `sstfilter <args>` with `input` on stdin.
Result RunTool(const std::string& args, const std::string& input = "") {
  const std::string in = Scratch("stdin"), out = Scratch("stdout"),
                    err = Scratch("stderr");
  {
    std::ofstream f(in, std::ios::binary | std::ios::trunc);
    f << input;
  }
  const std::string cmd = std::string(SSTFILTER_TOOL_PATH) + " " + args + " <" +
                          in + " >" + out + " 2>" + err;
  const int status = std::system(cmd.c_str());
  Result r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = Slurp(out);
  r.err = Slurp(err);
  for (const std::string& f : {in, out, err}) std::remove(f.c_str());
  return r;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// ---- params --------------------------------------------------------------

TEST(SstfilterToolTest, ParamsMatchesTheLibrary) {
  const Result r = RunTool("params --keys=1000000 --fpr=0.01");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "1000000 keys, target FPR 1%")) << r.out;
  // Each Bloom row names a spec; building that spec gives the bytes and
  // FPR the row prints, and the FPR meets the target.
  for (FilterKind kind : {FilterKind::kBloom, FilterKind::kBlockedBloom}) {
    const std::string name = FilterKindName(kind);
    const size_t row = r.out.find("\n" + name + " ");
    ASSERT_NE(row, std::string::npos) << name << "\n" << r.out;
    const size_t spec_at = r.out.find(name + ":", row);
    const std::string spec_text =
        r.out.substr(spec_at, r.out.find(' ', spec_at) - spec_at);
    FilterSpec spec;
    ASSERT_TRUE(ParseFilterSpec(spec_text, &spec).ok()) << spec_text;
    FilterParams p;
    ASSERT_TRUE(ParamsForSpec(spec, 1000000, &p).ok());
    EXPECT_LE(p.expected_fpr, 0.01);
    EXPECT_GT(p.expected_fpr, 0.0095);  // not wastefully large
    const std::string line =
        r.out.substr(row + 1, r.out.find('\n', row + 1) - row);
    EXPECT_TRUE(Contains(line, " " + std::to_string(p.filter_bytes) + " "))
        << line << " vs " << p.filter_bytes;
    EXPECT_TRUE(Contains(line, " " + std::to_string(p.num_probes) + " "))
        << line;
  }
  // 1M keys at 1%: standard Bloom needs ~9.6 bits per key and 7 probes.
  EXPECT_TRUE(Contains(r.out, "bloom:9.6 ")) << r.out;
}

// Without --kind, the range kind gets its own table, the one --kind=range
// prints: its specs and bytes are what the range builder writes, never the
// figures of a point kind.
TEST(SstfilterToolTest, ParamsRangeKindHasItsOwnTable) {
  const Result all = RunTool("params --keys=1000000 --fpr=0.01");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const Result range = RunTool("params --keys=1000000 --fpr=0.01 --kind=range");
  ASSERT_EQ(range.exit_code, 0) << range.err;
  // The range table, as --kind=range prints it, follows the point table,
  // where no row is named range.
  const size_t at = all.out.find("range kind: ");
  ASSERT_NE(at, std::string::npos) << all.out;
  EXPECT_FALSE(Contains(all.out.substr(0, at), "\nrange")) << all.out;
  EXPECT_EQ(all.out.substr(at), range.out);
  // Each of its rows names a range spec whose filter for 10^6 keys has the
  // bytes printed, and whose bound meets the target.
  int rows = 0;
  for (size_t pos = range.out.find(" range:"); pos != std::string::npos;
       pos = range.out.find(" range:", pos + 1)) {
    const size_t end = range.out.find(' ', pos + 1);
    RangeFilterSpec spec;
    ASSERT_TRUE(
        ParseRangeFilterSpec(range.out.substr(pos + 1, end - pos - 1), &spec)
            .ok())
        << range.out;
    const std::string line =
        range.out.substr(pos, range.out.find('\n', pos) - pos);
    EXPECT_TRUE(Contains(
        line, " " + std::to_string(RangeFilterSize(spec, 1000000)) + " "))
        << line;
    const uint64_t len = std::strtoull(
        range.out.c_str() + range.out.rfind('\n', pos) + 1, nullptr, 10);
    EXPECT_LE(RangeFprBound(spec.bits_per_key, len), 0.01) << line;
    rows++;
  }
  EXPECT_EQ(rows, 4) << range.out;
  // A target no kind reaches: no message quotes another kind for range.
  const Result tiny = RunTool("params --keys=1000000 --fpr=1e-20");
  EXPECT_EQ(tiny.exit_code, 2);
  EXPECT_FALSE(Contains(tiny.err, "range: counting")) << tiny.err;
  // FPRs are printed so that they show: never 0.000000.
  EXPECT_TRUE(Contains(tiny.err, "cannot reach FPR 1e-20")) << tiny.err;
  EXPECT_FALSE(Contains(tiny.err, "0.000000")) << tiny.err;
}

// The bytes column of `kind`'s row (0 if there is none).
uint64_t RowBytes(const std::string& out, const std::string& kind) {
  const size_t row = out.find("\n" + kind + " ");
  if (row == std::string::npos) return 0;
  const std::string line = out.substr(row + 1, out.find('\n', row + 1) - row);
  const size_t paren = line.find(" (");  // "<bytes>   (1.25 MiB)"
  size_t start = line.rfind(' ', line.find_last_not_of(' ', paren - 1)) + 1;
  if (line[start] == '~') start++;
  return std::strtoull(line.c_str() + start, nullptr, 10);
}

TEST(SstfilterToolTest, ParamsSizesMutableKindsAsBuilt) {
  for (uint64_t keys : {100000ull, 4000000ull}) {
    const Result r =
        RunTool("params --keys=" + std::to_string(keys) + " --fpr=0.001");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    MutableFilterOptions o;
    o.capacity = keys;
    o.target_fpr = 0.001;
    DynamicCuckooFilter cuckoo;
    ASSERT_TRUE(DynamicCuckooFilter::Create(o, &cuckoo).ok());
    std::string bytes;
    cuckoo.Serialize(&bytes);
    // Exact up to 2^20 keys; scaled (and marked ~) beyond.
    const uint64_t shown = RowBytes(r.out, "dynamic_cuckoo");
    if (keys <= (1u << 20)) {
      EXPECT_EQ(shown, bytes.size()) << r.out;
    } else {
      EXPECT_NEAR(static_cast<double>(shown), static_cast<double>(bytes.size()),
                  bytes.size() * 1e-4)
          << r.out;
      EXPECT_TRUE(Contains(r.out, "~")) << r.out;
    }
    if (keys <= (1u << 20)) {
      CountingBloomFilter counting;
      ASSERT_TRUE(CountingBloomFilter::Create(o, &counting).ok());
      bytes.clear();
      counting.Serialize(&bytes);
      EXPECT_EQ(RowBytes(r.out, "counting_bloom"), bytes.size()) << r.out;
    }
  }
}

TEST(SstfilterToolTest, ParamsOneKindAndSmallFilters) {
  const Result r =
      RunTool("params --keys=200 --fpr=0.001 --kind=blocked_bloom");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "blocked_bloom*")) << r.out;  // written as bloom
  EXPECT_TRUE(Contains(r.out, "written as a standard bloom")) << r.out;
  EXPECT_FALSE(Contains(r.out, "\nbloom ")) << r.out;
}

TEST(SstfilterToolTest, ParamsLevelsMatchesTheLibrary) {
  const Result r =
      RunTool("params --levels=1e6,1e7,1e8 --bits=10 --kind=blocked_bloom");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  LevelPlan plan;
  ASSERT_TRUE(PlanLevelBits(FilterKind::kBlockedBloom,
                            {1000000, 10000000, 100000000}, 10, &plan)
                  .ok());
  for (size_t i = 0; i < 3; i++) {
    char bits[32];
    std::snprintf(bits, sizeof(bits), " %.3f ", plan.bits_per_key[i]);
    EXPECT_TRUE(Contains(r.out, bits)) << bits << "\n" << r.out;
  }
  char fp[64];
  std::snprintf(fp, sizeof(fp), "%.6g by level, %.6g uniform",
                plan.expected_false_positives, plan.uniform_false_positives);
  EXPECT_TRUE(Contains(r.out, fp)) << fp << "\n" << r.out;
  EXPECT_FALSE(Contains(r.out, "\nbloom\n")) << r.out;  // --kind holds
}

// A --bits some kinds cannot plan: the others are printed, and each kind
// left out is named on stderr with its reason, as in --keys mode.
TEST(SstfilterToolTest, ParamsLevelsReportsEachKind) {
  Result r = RunTool("params --levels=1e6,1e7,1e8 --bits=40");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "\nbloom\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "\nblocked_bloom\n")) << r.out;
  EXPECT_FALSE(Contains(r.out, "\ncuckoo\n")) << r.out;  // at most 32 bits
  EXPECT_TRUE(Contains(r.err, "not shown:")) << r.err;
  EXPECT_TRUE(Contains(r.err, "  cuckoo: ")) << r.err;
  EXPECT_TRUE(Contains(r.err, "  ribbon: ")) << r.err;
  // Small FPRs show their digits.
  EXPECT_FALSE(Contains(r.out, " 0.000000%")) << r.out;
  // No kind can: exit status 2, nothing on stdout.
  r = RunTool("params --levels=1e6,1e7,1e8 --bits=100");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_TRUE(Contains(r.err, "no kind can plan 100 bits per key")) << r.err;
}

// --kind=auto: the plan of PlanFilterCosts, run by run, with the spec's
// options after "auto"; a bad option is a usage error naming it.
TEST(SstfilterToolTest, ParamsLevelsAuto) {
  const Result r = RunTool(
      "params --levels=64000,64000,1e6,1e7,1e8 --bits=10 "
      "--kind=auto:build_x=5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<uint64_t> runs = {64000, 64000, 1000000, 10000000,
                                      100000000};
  FilterSpec spec;
  ASSERT_TRUE(ParseFilterSpec("auto:10:build_x=5", &spec).ok());
  CostPlan plan;
  ASSERT_TRUE(PlanFilterCosts(spec, runs, TreeRebuilds(runs, 2), &plan).ok());
  EXPECT_TRUE(Contains(r.out, "auto:10:build_x=5: 5 runs")) << r.out;
  EXPECT_TRUE(Contains(r.out, "the first 2 as L0 files")) << r.out;
  for (size_t i = 0; i < runs.size(); i++) {
    char row[64];
    std::snprintf(row, sizeof(row), " %-14s %9.3f ",
                  FilterKindName(plan.kinds[i]), plan.bits_per_key[i]);
    EXPECT_TRUE(Contains(r.out, row)) << row << "\n" << r.out;
  }
  char fp[64];
  std::snprintf(fp, sizeof(fp), "per absent Get: %.6f false positives",
                plan.expected_false_positives);
  EXPECT_TRUE(Contains(r.out, fp)) << fp << "\n" << r.out;
  const Result bad = RunTool("params --levels=1e6,1e7 --kind=auto:read_us=-1");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(Contains(bad.err, "read_us must be within")) << bad.err;
  EXPECT_TRUE(bad.out.empty()) << bad.out;
}

TEST(SstfilterToolTest, ParamsRejectsBadArguments) {
  struct Case {
    const char* args;
    const char* message;
  };
  const Case cases[] = {
      {"params --fpr=0.01", "needs --keys"},
      {"params --keys=0", "needs --keys"},
      {"params --keys=100 --fpr=0", "--fpr must be within (0, 1)"},
      {"params --keys=100 --fpr=1.5", "--fpr must be within (0, 1)"},
      {"params --keys=100 --kind=nope", "unknown --kind \"nope\""},
      {"params --keys=100 --fpr=1e-30 --kind=bloom", "cannot reach"},
      {"params --keys=100 extra", "takes no file arguments"},
      {"params --keys=100 --expect=5", "--expect does not apply to params"},
      {"params --levels=1e6,x", "\"x\" is not a count"},
      {"params --levels=1e6,,1e7", "\"\" is not a count"},
      {"params --levels=1.5", "is not a count"},
      {"params --levels=1e6 --bits=0.1", "bits per key must be within"},
      {"params --levels=1e6 --keys=5",
       "--keys does not apply to params --levels"},
      {"params --keys=5 --bits=5", "--bits does not apply to params"},
      {"", "no command given"},
      {"frobnicate", "unknown command \"frobnicate\""},
      {"inspect", "needs at least one FILE.sst"},
      {"inspect --keys=5 x.sst", "--keys does not apply to inspect"},
      {"dedup x", "takes no files"},
      {"dedup --expect=0", "--expect must be > 0"},
      {"dedup --fpr=2", "--fpr must be within (0, 1)"},
  };
  for (const Case& c : cases) {
    const Result r = RunTool(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_TRUE(Contains(r.err, c.message)) << c.args << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << c.args << ": " << r.out;
  }
}

// Malformed and unknown flags are bad arguments too: exit status 2, a
// message naming the flag, nothing on stdout.
TEST(SstfilterToolTest, BadFlagsExitTwo) {
  struct Case {
    const char* args;
    const char* message;
  };
  const Case cases[] = {
      {"params --keys=1e6 --fpr=abc", "--fpr: \"abc\" is not a number"},
      {"params --keys=1e6 --fpr=0.01x", "--fpr: \"0.01x\" is not a number"},
      {"params --levels=1e6 --bits=abc", "--bits: \"abc\" is not a number"},
      {"params --levels=1e6 --bits=inf", "--bits: \"inf\" is not a number"},
      {"params --keys=abc", "--keys: \"abc\" is not a count"},
      {"params --keys=-5", "--keys: \"-5\" is not a count"},
      {"params --bogus=1", "unknown flag \"--bogus=1\""},
      {"params --keys=1e6 -x", "unknown flag \"-x\""},
      {"params --keys", "--keys needs a value"},
      {"params --keys=", "--keys needs a value"},
      {"params --keys=5 --keys=6", "--keys given twice"},
      {"dedup --expect=abc", "--expect: \"abc\" is not a count"},
      {"dedup --fpr=", "--fpr needs a value"},
      {"inspect --nope x.sst", "unknown flag \"--nope\""},
      // librocksdb's own flags are not the command's.
      {"params --keys=5 --db=/tmp/x", "unknown flag \"--db=/tmp/x\""},
  };
  for (const Case& c : cases) {
    const Result r = RunTool(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << ": " << r.err;
    EXPECT_TRUE(Contains(r.err, c.message)) << c.args << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << c.args << ": " << r.out;
  }
  // Both flag forms, anywhere on the line, and "--" before file names.
  const Result spaced = RunTool("--fpr 0.01 params --keys 1e6");
  const Result joined = RunTool("params --keys=1e6 --fpr=0.01");
  EXPECT_EQ(spaced.exit_code, 0) << spaced.err;
  EXPECT_EQ(spaced.out, joined.out);
  const Result dashed = RunTool("inspect -- --not-a-flag.sst");
  EXPECT_EQ(dashed.exit_code, 1);
  EXPECT_TRUE(Contains(dashed.err, "--not-a-flag.sst")) << dashed.err;
}

TEST(SstfilterToolTest, HelpListsOnlyItsOwnFlags) {
  for (const char* help :
       {"--help", "-h", "--helpshort", "--helpfull", "params --help"}) {
    const Result r = RunTool(help);
    EXPECT_EQ(r.exit_code, 0) << help;
    EXPECT_TRUE(r.err.empty()) << help << ": " << r.err;
    EXPECT_TRUE(Contains(r.out, "sstfilter params --keys=N")) << r.out;
    // Every flag of the command, and nothing else: one line each.
    int flags = 0;
    for (size_t at = r.out.find("\n  --"); at != std::string::npos;
         at = r.out.find("\n  --", at + 1)) {
      flags++;
    }
    EXPECT_EQ(flags, 8) << r.out;  // six flags, --help, --version
    for (const char* flag : {"--keys", "--fpr", "--kind", "--levels", "--bits",
                             "--expect", "--help", "--version"}) {
      EXPECT_TRUE(Contains(r.out, std::string("\n  ") + flag + " "))
          << flag << "\n"
          << r.out;
    }
    EXPECT_LT(r.out.size(), 3000u) << r.out;
    EXPECT_FALSE(Contains(r.out, "/")) << r.out;  // no build path
  }
  const Result v = RunTool("--version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_TRUE(Contains(v.out, "sstfilter version ")) << v.out;
}

// Every count takes the same forms: an integer or exponent form.
TEST(SstfilterToolTest, CountsTakeExponentForms) {
  const Result plain = RunTool("params --keys=1000000 --fpr=0.01");
  const Result exp = RunTool("params --keys=1e6 --fpr=0.01");
  EXPECT_EQ(exp.exit_code, 0) << exp.err;
  EXPECT_EQ(exp.out, plain.out);
  const Result levels = RunTool("params --levels=1e6,1000000 --bits=10");
  EXPECT_EQ(levels.exit_code, 0) << levels.err;
  const Result dedup = RunTool("dedup --expect=2.5e3", "a\nb\na\n");
  EXPECT_EQ(dedup.exit_code, 0) << dedup.err;
  EXPECT_EQ(dedup.out, "a\nb\n");
  const Result half = RunTool("params --keys=1.5 --fpr=0.01");
  EXPECT_EQ(half.exit_code, 2);
  EXPECT_TRUE(Contains(half.err, "--keys: \"1.5\" is not a count")) << half.err;
}

// ---- dedup -----------------------------------------------------------------

// Lines "url-<i>" for i < distinct, each `copies` times, interleaved.
std::string Urls(int distinct, int copies) {
  std::string in;
  for (int c = 0; c < copies; c++) {
    for (int i = 0; i < distinct; i++) {
      in += "https://example.com/page/" +
            std::to_string((i * 7919) % distinct) + "\n";
    }
  }
  return in;
}

// Checks that `out` has no line twice and keeps first-seen order; returns
// the number of lines.
int CheckDedupOutput(const std::string& out) {
  std::set<std::string> lines;
  size_t pos = 0;
  int n = 0;
  while (pos < out.size()) {
    const size_t end = out.find('\n', pos);
    EXPECT_NE(end, std::string::npos);
    if (end == std::string::npos) break;
    EXPECT_TRUE(lines.insert(out.substr(pos, end - pos)).second)
        << "printed twice: " << out.substr(pos, end - pos);
    pos = end + 1;
    n++;
  }
  return n;
}

TEST(SstfilterToolTest, DedupPrintsEachLineOnce) {
  for (const char* kind : {"dynamic_cuckoo", "counting_bloom"}) {
    const Result r =
        RunTool(std::string("dedup --expect=2000 --fpr=0.01 --kind=") + kind,
                Urls(2000, 3));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const int printed = CheckDedupOutput(r.out);
    // False positives drop ~1% of new lines; fixed input, so no flakes.
    EXPECT_GE(printed, 2000 * 0.97) << kind;
    EXPECT_LE(printed, 2000);
    EXPECT_TRUE(Contains(
        r.err, "6000 lines read, " + std::to_string(printed) + " printed, " +
                   std::to_string(6000 - printed) + " dropped"))
        << r.err;
    EXPECT_TRUE(Contains(r.err, kind)) << r.err;
    // First-seen order: the first lines are printed as they come.
    EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "https://example.com/page/0");
  }
}

// The summary's counts, as printed: lines read, printed and dropped.
void ExpectCounts(const std::string& err, int read, int printed) {
  EXPECT_TRUE(Contains(err, std::to_string(read) + " lines read, " +
                                std::to_string(printed) + " printed, " +
                                std::to_string(read - printed) +
                                " dropped as seen"))
      << err;
}

TEST(SstfilterToolTest, DedupGrowsPastExpect) {
  // 20x more distinct lines than expected, twice each: both kinds chain
  // filters, each sized for twice the lines of the last at half its FPR,
  // so at most ~1% of new lines is dropped (the FPRs sum to under 1%); a
  // single filter sized for 1,000 lines would drop most of them.
  constexpr int kDistinct = 20000;
  for (const char* kind : {"dynamic_cuckoo", "counting_bloom"}) {
    const Result r =
        RunTool(std::string("dedup --expect=1000 --fpr=0.01 --kind=") + kind,
                Urls(kDistinct, 2));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const int printed = CheckDedupOutput(r.out);
    EXPECT_GE(printed, kDistinct * (1 - 2 * 0.01)) << kind << "\n" << r.err;
    EXPECT_LE(printed, kDistinct);
    ExpectCounts(r.err, 2 * kDistinct, printed);
    EXPECT_TRUE(Contains(r.err, "outgrew --expect=1000: " +
                                    std::to_string(printed) + " lines printed"))
        << r.err;
    EXPECT_FALSE(Contains(r.err, "warning")) << r.err;
    if (std::string(kind) == "counting_bloom") {
      // Filters for 1,000, 2,000, 4,000 and 8,000 lines hold 15,000: the
      // fifth (16,000) holds the rest.
      EXPECT_TRUE(Contains(r.err, "in 5 chained filters")) << r.err;
    }
  }
  // The default kind, far past --expect.
  const Result r = RunTool("dedup --expect=100", Urls(2000, 2));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GE(CheckDedupOutput(r.out), 2000 * (1 - 2 * 0.01));
  EXPECT_TRUE(Contains(r.err, "outgrew --expect=100")) << r.err;
}

// A chain that cannot grow (here: the next filter's FPR needs more than
// the 64 counters per key a counting Bloom filter has) stops with an
// error naming the reason and the line it stopped at, exit status 1; it
// never drops lines silently.
TEST(SstfilterToolTest, DedupStopsWhenItCannotGrow) {
  const Result r = RunTool(
      "dedup --kind=counting_bloom --expect=100 --fpr=1e-12", Urls(1000, 1));
  EXPECT_EQ(r.exit_code, 1);
  // Filters for 100, 200 then 400 lines (FPR 5e-13, 2.5e-13, 1.25e-13):
  // the third cannot be made.
  EXPECT_TRUE(Contains(r.err,
                       "stopped at line 301 (300 lines printed, in 2 "
                       "filters)"))
      << r.err;
  EXPECT_TRUE(Contains(r.err, "target_fpr 1.25e-13 needs more than 64"))
      << r.err;
  EXPECT_EQ(CheckDedupOutput(r.out), 300);
}

TEST(SstfilterToolTest, DedupEdgeCases) {
  Result r = RunTool("dedup", "");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.out.empty());
  EXPECT_TRUE(Contains(r.err, "0 lines read, 0 printed")) << r.err;
  // Empty lines count as lines; a last line without '\n' is printed.
  r = RunTool("dedup", "\n\nb\nb");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "\nb\n");
  r = RunTool("dedup --kind=bloom");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Contains(r.err, "dedup --kind must be dynamic_cuckoo")) << r.err;
  r = RunTool("dedup --expect=1000000000000000");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Contains(r.err, "capacity")) << r.err;
}

// ---- inspect ---------------------------------------------------------------

#if SSTFILTER_TOOL_TEST_ROCKSDB

// Writes keys Key(0 .. n-1) into an SST with `policy` (nullptr: no filter).
void WriteSst(const std::string& path,
              std::shared_ptr<const rocksdb::FilterPolicy> policy, int n) {
  rocksdb::Options options;
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy = std::move(policy);
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), options);
  ASSERT_TRUE(writer.Open(path).ok());
  for (int i = 0; i < n; i++) {
    ASSERT_TRUE(writer.Put(test::Key(i), "value").ok());
  }
  ASSERT_TRUE(writer.Finish().ok());
}

// The number printed after `label` in r.out.
// The line of `out` that starts with `label` ("" if none).
std::string Line(const std::string& out, const std::string& label) {
  const size_t at = out.find(label);
  if (at == std::string::npos) return "";
  return out.substr(at, out.find('\n', at) - at);
}

double Field(const std::string& out, const std::string& label) {
  const size_t at = out.find(label);
  if (at == std::string::npos) return NAN;
  return std::atof(out.c_str() + at + label.size());
}

TEST(SstfilterToolTest, InspectBuiltinBloom) {
  const std::string path = Scratch("builtin.sst");
  WriteSst(path,
           std::shared_ptr<const rocksdb::FilterPolicy>(
               rocksdb::NewBloomFilterPolicy(10)),
           5000);
  const Result r = RunTool("inspect " + path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "entries:           5000 in ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "filter policy:")) << r.out;
  EXPECT_EQ(Field(r.out, "filter entries:"), 5000);
  // RocksDB's FastLocalBloom at 10 bits/key: ~10 bits per key on disk.
  const double bits = Field(r.out, "bits per key:");
  EXPECT_GT(bits, 9.5) << r.out;
  EXPECT_LT(bits, 11) << r.out;
  EXPECT_GT(Field(r.out, "filter size:"), 5000 * 9.5 / 8);
  EXPECT_TRUE(Contains(r.out, "sstfilter:         no:")) << r.out;
  std::remove(path.c_str());
}

#if SSTFILTER_TOOL_TEST_ADAPTER
TEST(SstfilterToolTest, InspectSstfilterFilter) {
  for (const char* spec : {"blocked_bloom:10", "cuckoo:12"}) {
    std::shared_ptr<const rocksdb::FilterPolicy> policy;
    ASSERT_TRUE(NewRocksDBFilterPolicy(spec, &policy).ok());
    const std::string path = Scratch("sstfilter.sst");
    WriteSst(path, policy, 20000);
    const Result r = RunTool("inspect " + path);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(Contains(
        r.out, std::string("filter policy:     sstfilter.") +
                   std::string(spec).substr(0, std::string(spec).find(':'))))
        << r.out;
    EXPECT_TRUE(Contains(r.out, "sstfilter:         yes: family sstfilter.v1"))
        << r.out;
    // The filter's size is what the spec builds for these keys.
    FilterParams p;
    ASSERT_TRUE(ParamsForSpec(test::MustParse(spec), 20000, &p).ok());
    EXPECT_EQ(Field(r.out, "filter size:"), p.filter_bytes) << r.out;
    std::remove(path.c_str());
  }
}

// A secret for keyed filters (sstfilter/secret.h).
std::shared_ptr<const FilterSecret> TestSecret() {
  std::unique_ptr<const FilterSecret> secret;
  EXPECT_TRUE(NewFilterSecret("sstfilter tool test secret 0123", &secret).ok());
  return std::shared_ptr<const FilterSecret>(std::move(secret));
}

// A keyed filter reads only with its secret: inspect says so, with the key
// id that names the secret, for a full filter and for every partition of a
// partitioned one; an unkeyed one says it is not keyed.
TEST(SstfilterToolTest, InspectKeyedFilter) {
  const std::shared_ptr<const FilterSecret> secret = TestSecret();
  const std::string id = std::to_string(secret->key_id());
  for (bool partitioned : {false, true}) {
    std::shared_ptr<const rocksdb::FilterPolicy> policy;
    ASSERT_TRUE(
        NewRocksDBFilterPolicy("blocked_bloom:10:keyed:salt", secret, &policy)
            .ok());
    const std::string path = Scratch("keyed.sst");
    rocksdb::Options options;
    rocksdb::BlockBasedTableOptions table;
    table.filter_policy = policy;
    if (partitioned) {
      table.partition_filters = true;
      table.index_type = rocksdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
      table.metadata_block_size = 1024;  // several partitions
    }
    options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
    rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), options);
    ASSERT_TRUE(writer.Open(path).ok());
    for (int i = 0; i < 20000; i++) {
      ASSERT_TRUE(writer.Put(test::Key(i), "value").ok());
    }
    ASSERT_TRUE(writer.Finish().ok());
    const Result r = RunTool("inspect " + path);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(Contains(r.out, "keyed:             yes, key id " + id + ":"))
        << r.out;
    EXPECT_TRUE(Contains(r.out, "only with that secret")) << r.out;
    EXPECT_TRUE(Contains(
        r.out, "the\n                     secret of key id " + id + " "))
        << r.out;
    EXPECT_TRUE(Contains(r.out, "reads every key as \"may\n")) << r.out;
    EXPECT_FALSE(Contains(r.out, "any sstfilter policy reads it")) << r.out;
    // Every filter RocksDB keeps for the file was read: one, or one per
    // partition, each keyed. (Partitions cut small, as RocksDB 9.6+ may cut
    // them apart from the index's, are written as standard Bloom filters
    // where those are more accurate in their bytes.)
    const std::string kinds = Line(r.out, "filter kinds:");
    double filters = 0;
    for (const char* kind : {"blocked_bloom (keyed) x ", " bloom (keyed) x "}) {
      if (Contains(kinds, kind)) filters += Field(kinds, kind);
    }
    if (partitioned) {
      EXPECT_GT(filters, 1) << r.out;
    } else {
      EXPECT_EQ(filters, 1) << r.out;
    }
    std::remove(path.c_str());
  }
  // The same spec without "keyed": any sstfilter policy reads it.
  std::shared_ptr<const rocksdb::FilterPolicy> policy;
  ASSERT_TRUE(NewRocksDBFilterPolicy("blocked_bloom:10", &policy).ok());
  const std::string path = Scratch("unkeyed.sst");
  WriteSst(path, policy, 20000);
  const Result r = RunTool("inspect " + path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "keyed:             no\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "any sstfilter policy reads it")) << r.out;
  EXPECT_EQ(Field(r.out, "filter kinds:      blocked_bloom x "), 1) << r.out;
  std::remove(path.c_str());
}
#endif  // SSTFILTER_TOOL_TEST_ADAPTER

TEST(SstfilterToolTest, InspectFileWithoutFilter) {
  const std::string path = Scratch("nofilter.sst");
  WriteSst(path, nullptr, 1000);
  const Result r = RunTool("inspect " + path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "filter:            NONE")) << r.out;
  EXPECT_TRUE(Contains(r.out, "drops an unknown filter id")) << r.out;
  EXPECT_FALSE(Contains(r.out, "bits per key")) << r.out;
  std::remove(path.c_str());
}

TEST(SstfilterToolTest, InspectRejectsFilesThatAreNotSsts) {
  const std::string text = Scratch("not-an-sst.txt");
  {
    std::ofstream f(text);
    f << "hello, this is not an SST file\n";
  }
  const std::string good = Scratch("good.sst");
  WriteSst(good, nullptr, 10);
  // Every file is reported; any unreadable one makes the exit status 1.
  const Result r = RunTool("inspect " + text + " " + good + " " +
                           Scratch("does-not-exist.sst"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, text + ": not a readable RocksDB SST file"))
      << r.err;
  EXPECT_TRUE(Contains(r.err, "does-not-exist.sst: not a readable")) << r.err;
  EXPECT_TRUE(Contains(r.out, good)) << r.out;
  std::remove(text.c_str());
  std::remove(good.c_str());
}

#if SSTFILTER_TOOL_TEST_ADAPTER
TEST(SstfilterToolTest, InspectShowsLevelsAndByLevelBits) {
  // A database with tables at L2 and L0: inspect names each file's level,
  // and the bits per key by_level gave it.
  const std::string dir = Scratch("leveled_db");
  std::filesystem::remove_all(dir);
  std::shared_ptr<const rocksdb::FilterPolicy> policy;
  ASSERT_TRUE(NewRocksDBFilterPolicy("bloom:10:by_level", &policy).ok());
  rocksdb::Options options;
  options.create_if_missing = true;
  options.disable_auto_compactions = true;
  options.num_levels = 3;
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy = policy;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  std::unique_ptr<rocksdb::DB> db;
  ASSERT_TRUE(OpenInto(&db, [&](auto* out) {
                return rocksdb::DB::Open(options, dir, out);
              }).ok());
  for (int i = 0; i < 20000; i++) {
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), test::Key(i), "v").ok());
  }
  ASSERT_TRUE(db->Flush(rocksdb::FlushOptions()).ok());
  // (CompactFiles rewrites the tables; CompactRange's change_level would
  // move them, filters and all.)
  std::vector<rocksdb::LiveFileMetaData> l0;
  db->GetLiveFilesMetaData(&l0);
  ASSERT_TRUE(
      db->CompactFiles(rocksdb::CompactionOptions(), {l0[0].name}, 2).ok());
  for (int i = 0; i < 2000; i++) {
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), test::Key(i), "w").ok());
  }
  ASSERT_TRUE(db->Flush(rocksdb::FlushOptions()).ok());
  std::vector<rocksdb::LiveFileMetaData> files;
  db->GetLiveFilesMetaData(&files);
  ASSERT_EQ(files.size(), 2u);
  std::string args = "inspect";
  for (const auto& f : files) args += " " + dir + f.name;
  const Result r = RunTool(args);  // while the database is open
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Files in the order given: find each one's report.
  for (const auto& f : files) {
    const size_t at = r.out.find(dir + f.name);
    ASSERT_NE(at, std::string::npos) << r.out;
    const std::string report = r.out.substr(at, r.out.find("\n\n", at) - at);
    EXPECT_TRUE(Contains(
        report, "level:             " + std::to_string(f.level) + "\n"))
        << report;
    // L0 files get more bits than the bottom under by_level.
    const double bits = Field(report, "bits per key:");
    if (f.level == 0) {
      EXPECT_GT(bits, 11) << report;
    } else {
      EXPECT_LT(bits, 10) << report;
    }
  }
  db.reset();
  // A file outside any database: level unknown.
  const std::string lone = Scratch("lone.sst");
  WriteSst(lone, nullptr, 10);
  const Result u = RunTool("inspect " + lone);
  EXPECT_TRUE(Contains(u.out, "level:             unknown")) << u.out;
  std::remove(lone.c_str());
  std::filesystem::remove_all(dir);
}
#endif  // SSTFILTER_TOOL_TEST_ADAPTER

#endif  // SSTFILTER_TOOL_TEST_ROCKSDB

#if SSTFILTER_TOOL_TEST_LEVELDB
// Writes 5000 keys into a LevelDB database with `policy` (nullptr: no
// filter) and returns its table files.
std::vector<std::string> WriteLevelDB(const std::string& dir,
                                      const leveldb::FilterPolicy* policy) {
  std::filesystem::remove_all(dir);
  leveldb::Options options;
  options.create_if_missing = true;
  options.filter_policy = policy;
  leveldb::DB* raw = nullptr;
  EXPECT_TRUE(leveldb::DB::Open(options, dir, &raw).ok());
  std::unique_ptr<leveldb::DB> db(raw);
  for (int i = 0; i < 5000; i++) {
    EXPECT_TRUE(db->Put(leveldb::WriteOptions(), test::Key(i), "v").ok());
  }
  db->CompactRange(nullptr, nullptr);  // returns void in LevelDB
  db.reset();
  std::vector<std::string> tables;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".ldb") tables.push_back(e.path().string());
  }
  EXPECT_FALSE(tables.empty());
  return tables;
}

TEST(SstfilterToolTest, InspectLevelDBTables) {
  const std::string dir = Scratch("leveldb");
  std::unique_ptr<const leveldb::FilterPolicy> ours;
  ASSERT_TRUE(NewLevelDBFilterPolicy("cuckoo:12", &ours).ok());
  std::vector<std::string> tables = WriteLevelDB(dir, ours.get());
  Result r = RunTool("inspect " + tables[0]);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "format:            LevelDB table")) << r.out;
  EXPECT_EQ(Field(r.out, "entries:"), 5000) << r.out;
  EXPECT_TRUE(Contains(r.out, "filter policy:     sstfilter.v1")) << r.out;
  // LevelDB makes one filter per 2 KiB of data: small ones, cuckoo's
  // fallback to standard Bloom among them.
  EXPECT_TRUE(Contains(r.out, "filter kinds:")) << r.out;
  EXPECT_FALSE(Contains(r.out, "unreadable")) << r.out;
  EXPECT_TRUE(Contains(r.out, "sstfilter:         yes")) << r.out;
  EXPECT_TRUE(Contains(r.out, "keyed:             no\n")) << r.out;
  EXPECT_GT(Field(r.out, "bits per key:"), 10) << r.out;

  std::unique_ptr<const leveldb::FilterPolicy> builtin(
      leveldb::NewBloomFilterPolicy(10));
  tables = WriteLevelDB(dir, builtin.get());
  r = RunTool("inspect " + tables[0]);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "leveldb.BuiltinBloomFilter2")) << r.out;
  EXPECT_TRUE(Contains(r.out, "sstfilter:         no:")) << r.out;
  EXPECT_TRUE(Contains(r.out, "drops it silently")) << r.out;

  // Keyed: every filter of the table needs the secret of the key id named.
  std::unique_ptr<const FilterSecret> secret;
  ASSERT_TRUE(NewFilterSecret("sstfilter tool test secret 0123", &secret).ok());
  const std::string id = std::to_string(secret->key_id());
  std::unique_ptr<const leveldb::FilterPolicy> keyed;
  ASSERT_TRUE(NewLevelDBFilterPolicy(
                  "bloom:10:keyed",
                  std::shared_ptr<const FilterSecret>(std::move(secret)),
                  &keyed)
                  .ok());
  tables = WriteLevelDB(dir, keyed.get());
  r = RunTool("inspect " + tables[0]);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "keyed:             yes, key id " + id + ":"))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "only with that secret")) << r.out;
  EXPECT_TRUE(Contains(r.out, "filter kinds:      bloom (keyed) x ")) << r.out;
  EXPECT_FALSE(Contains(r.out, "any sstfilter policy reads it")) << r.out;

  tables = WriteLevelDB(dir, nullptr);
  r = RunTool("inspect " + tables[0]);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "filter:            NONE")) << r.out;

  // A truncated table: an error naming the problem, exit status 1.
  std::filesystem::resize_file(tables[0], 30);
  r = RunTool("inspect " + tables[0]);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "not a readable")) << r.err;
  std::filesystem::remove_all(dir);
}
#endif  // SSTFILTER_TOOL_TEST_LEVELDB

}  // namespace
}  // namespace sstfilter
