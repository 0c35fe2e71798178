// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// sstfilter_compare: how many disk reads each filter saves, and what it
// costs, on real RocksDB and LevelDB databases, side by side with the
// engines' built-in filters. See docs/COMPARE.md.
//
// clang-format off
//   sstfilter_compare --num=1000000 --out=results/now --plot
//   sstfilter_compare --engines=rocksdb --policies=none,rocksdb:bloom:10,cuckoo:12
//   sstfilter_compare --policies='rocksdb:bloom:*,cuckoo:*' --sweep_bits=8,12,16
// clang-format on
//
// For every engine and policy it builds a fresh database of --num keys in a
// multi-level tree, then looks up present keys, random absent keys,
// neighbours of present keys and MultiGet batches, counting table-file
// reads and filter probes the same way for both engines, and ends with a
// verdict per engine (verdict.h). Flags and policies are all checked before
// any work starts; result files are written only when every run has
// finished.

#include <fcntl.h>
#include <gflags/gflags.h>
#include <leveldb/db.h>
#include <rocksdb/version.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "harness/scratch.h"
#include "sstfilter/filter.h"
#include "sstfilter/leveldb.h"
#include "sstfilter/range.h"
#include "sstfilter/rocksdb.h"
#include "tools/sstfilter_compare/engine.h"
#include "tools/sstfilter_compare/memory_workload.h"
#include "tools/sstfilter_compare/policies.h"
#include "tools/sstfilter_compare/progress.h"
#include "tools/sstfilter_compare/range_workload.h"
#include "tools/sstfilter_compare/report.h"
#include "tools/sstfilter_compare/results.h"
#include "tools/sstfilter_compare/workload.h"

#ifndef SSTFILTER_VERSION
#define SSTFILTER_VERSION "unknown"
#endif
#ifndef SSTFILTER_SOURCE_REV
#define SSTFILTER_SOURCE_REV ""
#endif

// --memory's defaults: each family at a sweep of bits per key.
#define MEMORY_POLICIES \
  "none,rocksdb:bloom:*,rocksdb:ribbon:*,ribbon:*:by_level,auto:*"
#define MEMORY_SWEEP "6,10,14"

DEFINE_string(engines, "rocksdb,leveldb",
              "Engines to compare: rocksdb, leveldb.");
// The default answers "which filter should I use?": per engine, our best
// policies beside the strongest built-in filters at equal memory (X@Y), the
// built-ins as users configure them, and no filter.
DEFINE_string(policies,
              "none,rocksdb:bloom:10,rocksdb:ribbon:10,leveldb:bloom:10,"
              "rocksdb/ribbon:10,rocksdb:ribbon@ribbon:10,"
              "rocksdb/ribbon:10:by_level,rocksdb:ribbon@ribbon:10:by_level,"
              "rocksdb:bloom@ribbon:10:by_level,"
              "rocksdb/blocked_bloom:10:by_level,"
              "rocksdb:ribbon@blocked_bloom:10:by_level,"
              "rocksdb/auto:10,rocksdb:ribbon@auto:10,rocksdb:bloom@auto:10,"
              "ribbon@leveldb:bloom:10,blocked_bloom@leveldb:bloom:10,"
              "auto@leveldb:bloom:10",
              "Comma-separated filter policies: none, rocksdb:bloom:<bits>, "
              "rocksdb:ribbon:<bits>, leveldb:bloom:<bits>, sstfilter specs "
              "(ribbon:10:by_level, blocked_bloom:10, cuckoo:12), and X@Y for "
              "family X at the filter memory of policy Y "
              "(rocksdb:ribbon@ribbon:10, cuckoo@rocksdb:bloom:10). "
              "Prefix rocksdb/ or leveldb/ to run an entry on one engine; "
              "'*' takes each value of --sweep_bits.");
DEFINE_string(sweep_bits, "",
              "Comma-separated bits per key that replace '*' in --policies.");
DEFINE_string(baseline, "rocksdb:bloom:10,leveldb:bloom:10",
              "Policies whose reads the 'x base' column divides by: on each "
              "engine the first of them that ran.");
DEFINE_uint64(num, 1000000, "Keys loaded into every database.");
DEFINE_int32(key_size, 16, "Key size in bytes (at least 9).");
DEFINE_int32(value_size, 100, "Value size in bytes.");
DEFINE_uint64(seed, 301, "Seed of keys, values and lookups.");
DEFINE_uint64(reads, 50000, "Keys looked up in each phase.");
DEFINE_double(phase_seconds, 2,
              "Time limit of each lookup phase (0: none); a phase that hits "
              "it reports what it did so far ('+' after its ops).");
DEFINE_int32(threads, 2, "Lookup threads.");
DEFINE_string(phases, "present,absent,neighbour,multiget",
              "Lookup phases: present, absent (random absent keys), "
              "neighbour (present keys with the last byte changed), "
              "multiget (batches; RocksDB only).");
DEFINE_int32(batch, 32, "Keys per MultiGet call.");
DEFINE_double(multiget_present, 0.5,
              "Fraction of present keys in MultiGet batches.");
DEFINE_string(tree, "fixed",
              "RocksDB tree: fixed (the same files and levels for every "
              "policy, built with CompactFiles) or natural (RocksDB's own "
              "automatic compactions with dynamic level sizes, settled).");
DEFINE_int32(levels, 3,
             "RocksDB: levels below L0 that the fixed tree is built into, or "
             "that the natural tree is sized for.");
DEFINE_int32(l0_files, 2, "RocksDB: L0 files on top of the fixed tree.");
DEFINE_string(compaction, "level",
              "RocksDB natural tree: level (leveled compaction) or universal "
              "(universal compaction, RocksDB's defaults for it).");
DEFINE_string(configure, "code",
              "RocksDB: how sstfilter policies and their level listener are "
              "made: code (NewRocksDBFilterPolicy, NewRocksDBLevelListener) "
              "or options (from option strings, as an OPTIONS file user "
              "gets them: filter_policy=<id>, "
              "listeners=sstfilter.level_listener), or no_listener (made "
              "in code, no level listener: by_level and auto size filters "
              "on their model tree).");
DEFINE_string(workload, "lookup",
              "lookup: Get and MultiGet phases; range: short scans with and "
              "without range filters (RocksDB, --tree=natural only; "
              "docs/COMPARE.md)");
DEFINE_uint64(scans, 2000,
              "Range workload: scans per rival, length, empty or not.");
DEFINE_string(range_lengths, "1,16,256,4096",
              "Range workload: range lengths in images (the keys' first 8 "
              "bytes).");
DEFINE_string(range_specs, "range:10,range:14,range:18",
              "Range workload: our range filter's specs, one database each.");
DEFINE_int32(prefix_bytes, 7,
             "Range workload: prefix length of RocksDB's prefix Bloom.");
DEFINE_string(memory, "",
              "Memory-budget mode (docs/COMPARE.md): comma-separated sizes "
              "(64MB, 1.5GiB) of one LRU block cache (RocksDB: data, index "
              "and filter blocks; LevelDB: data blocks); every database is "
              "measured at each. Its defaults: --engines=rocksdb "
              "--tree=natural --policies='" MEMORY_POLICIES
              "' --sweep_bits=" MEMORY_SWEEP ".");
DEFINE_bool(partitioned, false, "--memory: partitioned index and filters.");
DEFINE_string(key_dist, "uniform",
              "--memory: comma-separated key distributions of the Gets: "
              "uniform, zipf:<theta> (0 < theta < 1; YCSB's is 0.99).");
DEFINE_string(absent_share, "0.5",
              "--memory: comma-separated shares of the Gets that look up "
              "absent keys, each in [0, 1].");
DEFINE_bool(direct_io, true,
            "RocksDB: read tables with O_DIRECT if the file system allows "
            "(LevelDB has no direct I/O).");
DEFINE_string(db_dir, "",
              "Folder for the databases (one subfolder each). Default: a new "
              "temporary folder under $TMPDIR or /tmp, removed at the end.");
DEFINE_bool(keep, false, "Keep the databases.");
DEFINE_string(out, "",
              "Results folder for results.txt, results.csv, results.json "
              "(and the charts); created if missing. Empty: terminal only.");
DEFINE_bool(plot, false,
            "Draw reads.png and fpr.png with gnuplot (needs --out).");
DEFINE_string(source_rev, SSTFILTER_SOURCE_REV,
              "Source revision recorded with the results.");
DEFINE_bool(progress, true, "Progress lines on stderr.");
DEFINE_bool(predict_build, false,
            "After each load, time the same filter builders outside the "
            "database (filters of the mean keys per filter of each flush "
            "and compaction level) and predict the load's filter build time "
            "from that ns/key and the keys built: predicted beside measured "
            "in the Filter build table.");

namespace sstfilter {
namespace compare {
namespace {

namespace fs = std::filesystem;

constexpr int kUsageError = 2;
constexpr int kRunError = 1;

// Prints the error's message and returns `code`.
int Fail(int code, const Status& error) {
  std::fprintf(stderr, "sstfilter_compare: %s\n", error.message().c_str());
  if (code == kUsageError) {
    std::fprintf(stderr, "sstfilter_compare: --help lists the flags\n");
  }
  return code;
}

// The flags this tool defines (gflags also holds those of the libraries it
// links, e.g. RocksDB's tools, and its own): the ones defined in this file.
bool IsOurFlag(const gflags::CommandLineFlagInfo& info) {
  const std::string file = info.filename;
  const std::string self = "sstfilter_compare.cc";
  return file.size() >= self.size() &&
         file.compare(file.size() - self.size(), self.size(), self) == 0;
}

std::vector<gflags::CommandLineFlagInfo> OurFlags() {
  std::vector<gflags::CommandLineFlagInfo> all, ours;
  gflags::GetAllFlags(&all);
  for (const gflags::CommandLineFlagInfo& f : all) {
    if (IsOurFlag(f)) ours.push_back(f);
  }
  return ours;
}

// `text` wrapped at `width` columns, each line indented by `indent`.
std::string Wrap(const std::string& text, size_t indent, size_t width) {
  std::string out, line;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    start = end + 1;
    if (word.empty()) continue;
    if (!line.empty() && indent + line.size() + 1 + word.size() > width) {
      out += std::string(indent, ' ') + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += std::string(indent, ' ') + line + "\n";
  return out;
}

// --help: what the tool does and its flags, nothing else.
std::string HelpText() {
  std::string out =
      "sstfilter_compare: compares SST filter policies on real RocksDB and "
      "LevelDB databases (docs/COMPARE.md).\n"
      "  sstfilter_compare [--flag=value ...]\n\nFlags:\n";
  for (const gflags::CommandLineFlagInfo& f : OurFlags()) {
    const std::string value =
        f.type == "string" ? "\"" + f.default_value + "\"" : f.default_value;
    out += "  --" + f.name + " (" + f.type + ", default " + value + ")\n";
    out += Wrap(f.description, 6, 79);
  }
  out +=
      "\nBooleans also take --name (true) and --noname (false). --version "
      "prints the version.\n";
  return out;
}

// The command line, parsed: flags set, or help, or the problem.
struct ParsedArgs {
  enum What { kRun, kHelp, kVersion, kBad } what = kRun;
  std::vector<std::string> positional;
  Status error;
};

// Sets the flags of argv without gflags' own handling, which knows the
// flags of every linked library, prints them all for --help and exits 1 on a
// bad flag: here only this tool's flags exist, and a bad one is a usage
// error (exit 2) with a message naming it. Accepts --name=value, -name=value,
// --name value, and --name / --noname for booleans.
ParsedArgs ParseArgs(int argc, char** argv) {
  ParsedArgs r;
  const std::vector<gflags::CommandLineFlagInfo> flags = OurFlags();
  auto find = [&flags](const std::string& name) {
    for (const gflags::CommandLineFlagInfo& f : flags) {
      if (f.name == name) return &f;
    }
    return static_cast<const gflags::CommandLineFlagInfo*>(nullptr);
  };
  auto bad = [&r](const std::string& message) {
    r.what = ParsedArgs::kBad;
    r.error = Status::InvalidArgument(message);
    return r;
  };
  bool only_positional = false;
  for (int i = 1; i < argc; i++) {
    const std::string arg = argv[i];
    if (only_positional || arg.size() < 2 || arg[0] != '-') {
      r.positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      only_positional = true;
      continue;
    }
    const std::string body = arg.substr(arg[1] == '-' ? 2 : 1);
    const size_t eq = body.find('=');
    std::string name = body.substr(0, eq);
    const bool has_value = eq != std::string::npos;
    std::string value = has_value ? body.substr(eq + 1) : "";
    if (name == "help" || name == "helpfull" || name == "helpshort" ||
        name == "h" || name == "?") {
      r.what = ParsedArgs::kHelp;
      return r;
    }
    if (name == "version") {
      r.what = ParsedArgs::kVersion;
      return r;
    }
    const gflags::CommandLineFlagInfo* f = find(name);
    if (f == nullptr && !has_value && name.rfind("no", 0) == 0) {
      f = find(name.substr(2));
      if (f != nullptr && f->type == "bool") {
        name = f->name;
        value = "false";
      } else {
        f = nullptr;
      }
    } else if (f != nullptr && !has_value) {
      if (f->type == "bool") {
        value = "true";
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        return bad("--" + name + " needs a value (--" + name + "=...)");
      }
    }
    if (f == nullptr)
      return bad("unknown flag " + arg.substr(0, arg.find('=')));
    if (gflags::SetCommandLineOption(name.c_str(), value.c_str()).empty()) {
      return bad("--" + name + ": \"" + value + "\" is not a valid " + f->type +
                 " value");
    }
  }
  return r;
}

std::string UtcNow() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// True if files in `dir` can be opened with O_DIRECT.
bool DirectIoWorks(const std::string& dir) {
  const std::string probe = dir + "/.direct_io_probe";
  const int fd = ::open(probe.c_str(), O_CREAT | O_RDWR | O_DIRECT, 0644);
  if (fd < 0) return false;
  ::close(fd);
  ::unlink(probe.c_str());
  return true;
}

// Writes `text` to `path` through a temporary file.
Status WriteFile(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text;
    f.close();
    if (!f) return Status::InvalidArgument("cannot write " + tmp);
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    return Status::InvalidArgument("cannot rename " + tmp + ": " +
                                   ec.message());
  }
  return Status::OK();
}

// The gnuplot terminal for PNG output, or "" if gnuplot cannot draw PNGs.
std::string PngTerminal() {
  for (const char* t : {"pngcairo", "png"}) {
    const std::string cmd = std::string("gnuplot -e 'set terminal ") + t +
                            "' >/dev/null 2>&1 </dev/null";
    if (std::system(cmd.c_str()) == 0) return t;
  }
  return "";
}

struct Flags {
  unsigned engines = 0;
  std::vector<EngineBit> engine_order;
  std::vector<Phase> phases;
  std::vector<PolicyRequest> policies;
  std::vector<std::string> baselines;
  RocksDBTree tree;
  std::string png_terminal;
  bool range = false;  // --workload=range
  RangeWorkloadOptions range_options;
  bool memory = false;  // --memory
  MemoryWorkloadOptions memory_options;
};

// The problem with a flag: InvalidArgument naming the flag.
Status Bad(std::string message) {
  return Status::InvalidArgument(std::move(message));
}

Status CheckEngines(Flags* f) {
  for (const std::string& e : SplitList(FLAGS_engines)) {
    EngineBit bit;
    if (e == "rocksdb") {
      bit = kRocksDB;
    } else if (e == "leveldb") {
      bit = kLevelDB;
    } else {
      return Bad("--engines: unknown engine \"" + e + "\" (rocksdb, leveldb)");
    }
    if (f->engines & bit) return Bad("--engines: \"" + e + "\" given twice");
    f->engines |= bit;
    f->engine_order.push_back(bit);
  }
  return Status::OK();
}

Status CheckPhases(Flags* f) {
  for (const std::string& p : SplitList(FLAGS_phases)) {
    bool known = false;
    for (Phase ph : kAllPhases) {
      if (p != PhaseName(ph)) continue;
      for (Phase seen : f->phases) {
        if (seen == ph) return Bad("--phases: \"" + p + "\" given twice");
      }
      f->phases.push_back(ph);
      known = true;
    }
    if (!known) {
      return Bad("--phases: unknown phase \"" + p +
                 "\" (present, absent, neighbour, multiget)");
    }
  }
  return Status::OK();
}

Status CheckPolicies(Flags* f) {
  Status s = ParsePolicyList(FLAGS_policies, FLAGS_sweep_bits, &f->policies);
  if (!s.ok()) return Bad("--policies: " + s.message());
  bool any = false;
  for (const PolicyRequest& r : f->policies) {
    any = any || (r.engines & f->engines);
  }
  if (!any)
    return Bad("--policies: no policy runs on the engines of --engines");
  if (FLAGS_baseline.empty()) return Status::OK();
  for (const std::string& b : SplitList(FLAGS_baseline)) {
    PolicyRequest r;
    s = ParsePolicyEntry(b, &r);
    if (!s.ok()) return Bad("--baseline: " + s.message());
    f->baselines.push_back(r.sized ? r.policy.FamilyName() + "@" +
                                         r.reference.ToString()
                                   : r.policy.ToString());
  }
  return Status::OK();
}

// The numeric flags and their ranges, [min, max] as written in the message.
Status CheckRanges() {
  struct Range {
    const char* flag;
    double value;
    double min;
    double max;
    const char* range;  // as the message shows it, with any reason
  };
  const Range kRanges[] = {
      // clang-format off
      {"num", static_cast<double>(FLAGS_num), 1000, 1e10, "[1000, 10^10]"},
      {"key_size", static_cast<double>(FLAGS_key_size), kMinKeySize, 4096,
       "[9, 4096] (8 bytes of key number and at least one pad byte for "
       "neighbour keys)"},
      {"value_size", static_cast<double>(FLAGS_value_size), 0, 1 << 20,
       "[0, 1048576]"},
      {"reads", static_cast<double>(FLAGS_reads), 1, 1e9, "[1, 10^9]"},
      {"phase_seconds", FLAGS_phase_seconds, 0, 86400, "[0, 86400]"},
      {"threads", static_cast<double>(FLAGS_threads), 1, 256, "[1, 256]"},
      {"batch", static_cast<double>(FLAGS_batch), 1, 10000, "[1, 10000]"},
      {"multiget_present", FLAGS_multiget_present, 0, 1, "[0, 1]"},
      {"levels", static_cast<double>(FLAGS_levels), 1, 6, "[1, 6]"},
      {"l0_files", static_cast<double>(FLAGS_l0_files), 0, 20, "[0, 20]"},
      // clang-format on
  };
  for (const Range& r : kRanges) {
    if (!(r.value >= r.min && r.value <= r.max)) {  // also catches NaN
      return Bad(std::string("--") + r.flag + " must be within " + r.range);
    }
  }
  return Status::OK();
}

Status CheckTree(Flags* f) {
  if (FLAGS_tree != "fixed" && FLAGS_tree != "natural") {
    return Bad("--tree: unknown tree \"" + FLAGS_tree + "\" (fixed, natural)");
  }
  f->tree.levels = FLAGS_levels;
  f->tree.l0_files = FLAGS_l0_files;
  if (FLAGS_tree == "natural") {
    f->tree =
        NaturalTree(FLAGS_num, FLAGS_key_size, FLAGS_value_size, FLAGS_levels);
  }
  if (FLAGS_configure != "code" && FLAGS_configure != "options" &&
      FLAGS_configure != "no_listener") {
    return Status::InvalidArgument("--configure: unknown way \"" +
                                   FLAGS_configure +
                                   "\" (code, options, no_listener)");
  }
  f->tree.from_options = FLAGS_configure == "options";
  f->tree.no_listener = FLAGS_configure == "no_listener";
  if (FLAGS_compaction != "level" && FLAGS_compaction != "universal") {
    return Bad("--compaction: unknown style \"" + FLAGS_compaction +
               "\" (level, universal)");
  }
  if (FLAGS_compaction == "universal" && !f->tree.natural) {
    return Bad("--compaction=universal: needs --tree=natural");
  }
  f->tree.universal = FLAGS_compaction == "universal";
  f->tree.partitioned = FLAGS_partitioned;
  return Status::OK();
}

LookupOptions LookupFlags() {
  LookupOptions lookup;
  lookup.reads = FLAGS_reads;
  lookup.max_seconds = FLAGS_phase_seconds;
  lookup.threads = FLAGS_threads;
  lookup.batch = FLAGS_batch;
  lookup.multiget_present = FLAGS_multiget_present;
  lookup.seed = FLAGS_seed;
  return lookup;
}

bool IsDefault(const char* flag) {
  return gflags::GetCommandLineFlagInfoOrDie(flag).is_default;
}

// --memory sets the defaults of the flags it changes the meaning of; run
// before the other checks.
void MemoryDefaults() {
  if (FLAGS_memory.empty()) return;
  if (IsDefault("engines")) FLAGS_engines = "rocksdb";
  if (IsDefault("tree")) FLAGS_tree = "natural";
  if (IsDefault("policies")) {
    FLAGS_policies = MEMORY_POLICIES;
    if (FLAGS_engines.find("leveldb") != std::string::npos) {
      FLAGS_policies += ",leveldb:bloom:*";
    }
    if (IsDefault("sweep_bits")) FLAGS_sweep_bits = MEMORY_SWEEP;
  }
}

Status CheckMemory(Flags* f) {
  if (FLAGS_memory.empty()) {
    for (const char* flag : {"partitioned", "key_dist", "absent_share"}) {
      if (!IsDefault(flag)) {
        return Bad(std::string("--") + flag + ": needs --memory");
      }
    }
    return Status::OK();
  }
  if (f->range) return Bad("--memory: not with --workload=range");
  MemoryWorkloadOptions& o = f->memory_options;
  std::vector<uint64_t> budgets;
  for (const std::string& size : SplitList(FLAGS_memory)) {
    uint64_t bytes = 0;
    const Status s = ParseByteSize(size, &bytes);
    if (!s.ok()) return Bad("--memory: " + s.message());
    budgets.push_back(bytes);
  }
  std::vector<double> shares, thetas;
  for (const std::string& share : SplitList(FLAGS_absent_share)) {
    char* end = nullptr;
    const double v = std::strtod(share.c_str(), &end);
    if (share.empty() || *end != '\0' || !(v >= 0 && v <= 1)) {
      return Bad("--absent_share: \"" + share + "\" is not in [0, 1]");
    }
    shares.push_back(v);
  }
  for (const std::string& dist : SplitList(FLAGS_key_dist)) {
    double theta = 0;
    const Status s = ParseKeyDist(dist, &theta);
    if (!s.ok()) return Bad("--key_dist: " + s.message());
    thetas.push_back(theta);
  }
  for (uint64_t b : budgets) {
    for (double theta : thetas) {
      for (double share : shares) o.workloads.push_back({b, share, theta});
    }
  }
  for (const PolicyRequest& r : f->policies) {
    if (r.sized) {
      return Bad("--memory: \"" + r.text +
                 "\": X@Y has no meaning here, every filter is paid from "
                 "the budget; sweep its bits with '*' and --sweep_bits");
    }
  }
  o.lookup = LookupFlags();
  o.warmup_chunk = std::clamp<uint64_t>(FLAGS_reads / 2, 2000, 50000);
  o.partitioned = FLAGS_partitioned;
  o.keep = FLAGS_keep;
  f->memory = true;
  return Status::OK();
}

// Makes the --out folder and writes a file into it, so that an unusable
// folder stops the tool before any database is built.
Status MakeOutputFolder() {
  std::error_code ec;
  fs::create_directories(FLAGS_out, ec);
  if (ec) {
    return Bad("--out: cannot make the folder " + FLAGS_out + ": " +
               ec.message());
  }
  const std::string probe = (fs::path(FLAGS_out) / ".write_probe").string();
  const int fd = ::open(probe.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0) {
    return Bad("--out: cannot write into " + FLAGS_out + ": " +
               std::strerror(errno));
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return Status::OK();
}

// --out and --plot; makes the --out folder last, once every other check
// has passed.
Status CheckOutput(Flags* f) {
  if (!FLAGS_out.empty()) {
    std::error_code ec;
    if (fs::exists(FLAGS_out, ec) && !fs::is_directory(FLAGS_out, ec)) {
      return Bad("--out: " + FLAGS_out + " exists and is not a folder");
    }
    if (fs::exists(fs::path(FLAGS_out) / "results.json", ec)) {
      return Bad("--out: " + FLAGS_out +
                 " already holds results; choose another folder");
    }
  }
  if (FLAGS_plot) {
    if (FLAGS_out.empty())
      return Bad("--plot needs --out (a folder for the charts)");
    f->png_terminal = PngTerminal();
    if (f->png_terminal.empty()) {
      return Bad(
          "--plot: gnuplot with PNG output not found (Debian: apt-get "
          "install gnuplot-nox)");
    }
  }
  return FLAGS_out.empty() ? Status::OK() : MakeOutputFolder();
}

Status CheckWorkload(Flags* f) {
  if (FLAGS_workload == "lookup") return Status::OK();
  if (FLAGS_workload != "range") {
    return Bad("--workload: unknown workload \"" + FLAGS_workload +
               "\" (lookup, range)");
  }
  if (f->engines != kRocksDB || !f->tree.natural) {
    return Bad("--workload=range: needs --engines=rocksdb --tree=natural");
  }
  RangeWorkloadOptions& o = f->range_options;
  for (const std::string& len : SplitList(FLAGS_range_lengths)) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(len.c_str(), &end, 10);
    if (len.empty() || *end != '\0' || v < 1 || v > (1ULL << 40)) {
      return Bad("--range_lengths: \"" + len + "\" is not in [1, 2^40]");
    }
    o.lengths.push_back(v);
  }
  for (const std::string& spec : SplitList(FLAGS_range_specs)) {
    RangeFilterSpec parsed;
    const Status s = ParseRangeFilterSpec(spec, &parsed);
    if (!s.ok()) return Bad("--range_specs: " + s.message());
    o.range_specs.push_back(spec);
  }
  if (o.lengths.empty()) return Bad("--range_lengths: no length");
  if (FLAGS_prefix_bytes < 1 || FLAGS_prefix_bytes > 8) {
    return Bad("--prefix_bytes: " + std::to_string(FLAGS_prefix_bytes) +
               " is not in [1, 8]");
  }
  if (FLAGS_scans < 1) return Bad("--scans: must be at least 1");
  o.prefix_bytes = FLAGS_prefix_bytes;
  o.scans = FLAGS_scans;
  o.tree = f->tree;
  o.keep = FLAGS_keep;
  f->range = true;
  return Status::OK();
}

// Checks every flag, in the order of --helpshort's topics.
Status CheckFlags(Flags* f) {
  MemoryDefaults();
  for (Status (*check)(Flags*) : {CheckEngines, CheckPhases, CheckPolicies}) {
    Status p = check(f);
    if (!p.ok()) return p;
  }
  Status p = CheckRanges();
  if (p.ok()) p = CheckTree(f);
  if (p.ok()) p = CheckWorkload(f);
  if (p.ok()) p = CheckMemory(f);
  return p.ok() ? CheckOutput(f) : p;
}

// Whether the engine's policy factory makes `policy` (NotSupported with
// its refusal if not). Specs were validated when parsed and keyed ones get
// RunSecret(), so a refusal is unexpected; it is reported as a skipped run
// rather than stopping the comparison.
Status Supported(const Policy& policy, EngineBit engine) {
  if (policy.family != Family::kSstfilter) return Status::OK();
  const std::string spec = policy.spec.ToString();
  if (engine == kRocksDB) {
    std::shared_ptr<const rocksdb::FilterPolicy> p;
    rocksdb::Status rs = NewRocksDBFilterPolicy(spec, RunSecret(), &p);
    if (!rs.ok()) return Status::NotSupported(rs.ToString());
  } else {
    std::unique_ptr<const leveldb::FilterPolicy> p;
    leveldb::Status ls = NewLevelDBFilterPolicy(spec, RunSecret(), &p);
    if (!ls.ok()) return Status::NotSupported(ls.ToString());
  }
  return Status::OK();
}

std::string FormatBytes(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f", v);
  return buf;
}

// Everything a comparison runs with, set up before the first policy.
struct Setup {
  Flags flags;
  struct Planned {
    EngineBit engine;
    PlannedRun run;
  };
  std::vector<Planned> plan;
  std::unique_ptr<harness::ScratchDir> temp;     // unless --db_dir
  std::string base;                              // the databases' folder
  std::vector<std::unique_ptr<Engine>> engines;  // in flags.engine_order

  Engine* EngineFor(EngineBit e) const {
    for (size_t i = 0; i < flags.engine_order.size(); i++) {
      if (flags.engine_order[i] == e) return engines[i].get();
    }
    return nullptr;
  }
};

// Plans the runs, makes the databases' folder and the engines.
// The folder the databases go in: --db_dir, or a scratch folder.
Status MakeBase(Setup* setup) {
  if (FLAGS_db_dir.empty()) {
    const std::string err =
        harness::ScratchDir::New("sstfilter_compare", FLAGS_keep, &setup->temp);
    if (!err.empty()) return Status::InvalidArgument(err);
    setup->base = setup->temp->path();
  } else {
    setup->base = FLAGS_db_dir;
    std::error_code ec;
    fs::create_directories(setup->base, ec);
    if (ec) return Bad("--db_dir " + setup->base + ": " + ec.message());
  }
  return Status::OK();
}

Status Prepare(Setup* setup, Report* report) {
  for (EngineBit e : setup->flags.engine_order) {
    for (const PlannedRun& r : PlanRuns(setup->flags.policies, e)) {
      setup->plan.push_back({e, r});
    }
  }
  if (setup->plan.empty()) return Bad("nothing to run");
  Status err = MakeBase(setup);
  if (!err.ok()) return err;
  const bool direct = FLAGS_direct_io && DirectIoWorks(setup->base);
  for (EngineBit e : setup->flags.engine_order) {
    setup->engines.push_back(e == kRocksDB
                                 ? NewRocksDBEngine(direct, setup->flags.tree)
                                 : NewLevelDBEngine());
    const Engine& engine = *setup->engines.back();
    report->engines.push_back(
        {engine.name(), engine.version(), engine.io_mode()});
  }
  report->num_keys = FLAGS_num;
  report->baselines = setup->flags.baselines;
  return Status::OK();
}

// How the RocksDB tree is built, for the header.
std::string RocksDBTreeText(const Flags& f) {
  const RocksDBTree& t = f.tree;
  if (!t.natural) {
    return "auto compactions off; keys written in generations flushed and "
           "moved by CompactFiles to L" +
           std::to_string(t.levels) + " .. L1 (sizes 10:1 per level), then " +
           std::to_string(t.l0_files) +
           " L0 files; 4 KiB blocks; index and filters held by the table "
           "readers";
  }
  const std::string style =
      t.universal ? "universal compaction (RocksDB's defaults for it)"
                  : "level_compaction_dynamic_level_bytes=true";
  return "natural: keys Put in random order in chunks of " +
         std::to_string(t.keys_per_flush) +
         ", each flushed and its automatic compactions settled before the "
         "next; " +
         style + ", write_buffer_size " + std::to_string(t.write_buffer_size) +
         ", max_bytes_for_level_base " +
         std::to_string(t.max_bytes_for_level_base) +
         ", target_file_size_base " + std::to_string(t.target_file_size_base) +
         " (sized for " + std::to_string(t.levels) +
         " levels below L0), other options RocksDB's defaults; reopened with "
         "automatic compactions off; 4 KiB blocks; index and filters held by "
         "the table readers";
}

// The header of the results: versions, the command, keys, lookups, trees.
void DescribeSetup(const Setup& setup, const std::string& command,
                   Report* report) {
  const std::string rev =
      FLAGS_source_rev.empty() ? "" : " (" + FLAGS_source_rev + ")";
  const std::string time_cap =
      FLAGS_phase_seconds > 0
          ? " (at most " + FormatNumber(FLAGS_phase_seconds) + " s)"
          : std::string();
  report->header = {
      {"sstfilter_compare",
       std::string("sstfilter ") + SSTFILTER_VERSION + rev + ", RocksDB " +
           rocksdb::GetRocksVersionAsString(true) + ", LevelDB " +
           std::to_string(leveldb::kMajorVersion) + "." +
           std::to_string(leveldb::kMinorVersion) + ", compiler " +
           __VERSION__},
      {"command", command},
      {"started", UtcNow()},
      {"keys", std::to_string(FLAGS_num) + " unique keys of " +
                   std::to_string(FLAGS_key_size) + " bytes with " +
                   std::to_string(FLAGS_value_size) +
                   "-byte values, loaded in random order, seed " +
                   std::to_string(FLAGS_seed) + ", no compression"},
      {"lookups",
       std::to_string(FLAGS_reads) + " keys per phase" + time_cap + ", " +
           std::to_string(FLAGS_threads) + " threads, MultiGet batches of " +
           std::to_string(FLAGS_batch) + " keys (" +
           FormatNumber(100 * FLAGS_multiget_present) + "% present)"},
      {"databases",
       setup.base + (FLAGS_keep ? " (kept)" : " (removed at the end)")},
      {"cpus", std::to_string(std::thread::hardware_concurrency())},
  };
  if (setup.flags.engines & kRocksDB) {
    report->header.push_back({"rocksdb tree", RocksDBTreeText(setup.flags)});
    if (setup.flags.tree.from_options) {
      report->header.push_back(
          {"rocksdb configure",
           "sstfilter policies and the level listener from option strings"});
    }
    if (setup.flags.tree.no_listener) {
      report->header.push_back(
          {"rocksdb configure",
           "sstfilter policies in code, no level listener (model trees)"});
    }
  }
  if (setup.flags.engines & kLevelDB) {
    report->header.push_back(
        {"leveldb tree",
         "LevelDB's own compactions, made deterministic: keys written in "
         "chunks of 3/4 of a memtable, each flushed and its compactions "
         "finished before the next; work LevelDB schedules during lookups "
         "(seek compactions) is held until the lookups end; 4 KiB blocks"});
  }
}

// One policy on one engine, from the plan to its results.
class PolicyRunner {
 public:
  PolicyRunner(const Setup& setup, const KeySpace& keys, Progress* progress,
               Report* report)
      : setup_(setup),
        keys_(keys),
        lookup_(LookupFlags()),
        progress_(progress),
        report_(report) {}

  // Runs the index-th planned run (1-based) and adds it to the report
  // (skipped, with the reason, if it cannot run). An error ends the
  // comparison.
  Status Run(int index, const Setup::Planned& p);

 private:
  // Gives X of X@Y the bits per key that match Y's filter memory, or says
  // why X cannot run.
  Status SizeToReference(Engine* engine, PolicyRun* run);
  // Builds the database and runs the lookup phases.
  Status BuildAndLookUp(Engine* engine, int index, PolicyRun* run);
  Status RunPhases(Engine* engine, PolicyRun* run);
  // --predict_build: times the run's builders outside the database.
  Status PredictBuild(Engine* engine, PolicyRun* run);
  void ProgressUpdate(uint64_t done, uint64_t total) {
    progress_->Update(done, total);
  }

  const Setup& setup_;
  const KeySpace& keys_;
  const LookupOptions lookup_;
  Progress* const progress_;
  Report* const report_;
  std::string tag_;  // "[3/8] rocksdb cuckoo:12", for progress and errors
  bool noted_multiget_ = false;
};

Status PolicyRunner::Run(int index, const Setup::Planned& p) {
  Engine* engine = setup_.EngineFor(p.engine);
  PolicyRun run;
  run.engine = EngineName(p.engine);
  run.label = p.run.label;
  run.policy = p.run.policy;
  run.sized = p.run.sized;
  run.implicit = p.run.implicit;
  if (p.run.sized) run.reference = p.run.reference.ToString();
  tag_ = "[" + std::to_string(index) + "/" +
         std::to_string(setup_.plan.size()) + "] " + run.engine + " " +
         run.label;
  Status why = Supported(run.policy, p.engine);
  if (why.ok() && run.sized) why = SizeToReference(engine, &run);
  if (!why.ok()) {
    run.skipped = true;
    run.skip_reason = why.message();
    progress_->Note(tag_ + ": skipped: " + why.message());
    report_->runs.push_back(run);
    return Status::OK();
  }
  Status err = BuildAndLookUp(engine, index, &run);
  if (!err.ok()) {
    (void)engine->Close();  // the build's error is the one to report
    return Status::Corruption(tag_ + ": " + err.message());
  }
  report_->runs.push_back(run);
  return Status::OK();
}

Status PolicyRunner::SizeToReference(Engine* engine, PolicyRun* run) {
  const PolicyRun* y = report_->FindRun(run->engine, run->reference);
  if (y == nullptr) {
    return Status::NotSupported("its reference " + run->reference +
                                " did not run");
  }
  if (y->build.num_filters == 0) {
    return Status::NotSupported("its reference " + run->reference +
                                " built no filters");
  }
  // RocksDB reports every table (level and keys): X's filters for them
  // must total Y's bytes. LevelDB: one filter of the mean keys per filter.
  std::vector<FilterTable> tables = y->build.tables;
  double target = static_cast<double>(y->build.filter_bytes);
  std::string what = FormatBytes(target) + " filter bytes of " +
                     std::to_string(tables.size()) + " tables";
  if (tables.empty()) {
    FilterTable mean;
    mean.keys = std::max<uint64_t>(
        1, static_cast<uint64_t>(std::llround(y->keys_per_filter(FLAGS_num))));
    tables.push_back(mean);
    target /= static_cast<double>(y->build.num_filters);
    what = FormatBytes(target) + " bytes per filter of " +
           std::to_string(mean.keys) + " keys";
  }
  Policy sized;
  Status s = SizeToMemory(
      run->policy, tables, target,
      [engine](const Policy& q, int level, uint64_t n, uint64_t* bytes) {
        return engine->BuiltinFilterBytes(q, level, n, bytes);
      },
      &sized);
  if (!s.ok()) {
    return Status::NotSupported("cannot match " + run->reference + " (" + what +
                                "): " + s.ToString());
  }
  run->policy = sized;
  progress_->Note(tag_ + ": " + sized.ToString() + " matches " + what);
  return Status::OK();
}

Status PolicyRunner::BuildAndLookUp(Engine* engine, int index, PolicyRun* run) {
  char sub[32];
  std::snprintf(sub, sizeof(sub), "/%s-%02d", run->engine.c_str(), index);
  const std::string dir = setup_.base + sub;
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    return Bad(dir + " already exists; use an empty --db_dir");
  }
  progress_->Begin(tag_ + " (" + run->policy.ToString() + "): load");
  Status err = engine->Build(
      run->policy, keys_, dir,
      [this](uint64_t done, uint64_t total) { ProgressUpdate(done, total); },
      &run->build);
  if (!err.ok()) return err;
  if (run->build.num_entries != FLAGS_num) {
    return Status::Corruption(
        "the database holds " + std::to_string(run->build.num_entries) +
        " entries, expected " + std::to_string(FLAGS_num));
  }
  progress_->End(FormatBytes(run->bits_per_key_disk(FLAGS_num)) +
                 " filter bits/key");
  if (FLAGS_predict_build) {
    err = PredictBuild(engine, run);
    if (!err.ok()) return err;
  }
  err = RunPhases(engine, run);
  if (err.ok()) err = engine->Close();
  if (err.ok() && !FLAGS_keep) fs::remove_all(dir, ec);
  return err;
}

Status PolicyRunner::PredictBuild(Engine* engine, PolicyRun* run) {
  progress_->Begin(tag_ + ": predict build");
  for (BuildSlice& slice : run->build.build_split) {
    if (slice.filters == 0 || slice.keys == 0) continue;
    const uint64_t per_filter =
        std::max<uint64_t>(1, (slice.keys + slice.filters / 2) / slice.filters);
    // At least 200,000 keys (or all the slice built), in filters of the
    // slice's mean size.
    const uint64_t filters = std::min<uint64_t>(
        slice.filters,
        std::max<uint64_t>(1, (200000 + per_filter - 1) / per_filter));
    // The median of three timings: one preempted timing does not count.
    double ns[3];
    for (double& t : ns) {
      Status err =
          engine->TimeFilterBuild(run->policy, slice, per_filter, filters, &t,
                                  &slice.predicted_bits_per_key);
      if (!err.ok()) return err;
    }
    std::sort(ns, ns + 3);
    slice.predicted_ns_per_key = ns[1];
  }
  progress_->End("");
  return Status::OK();
}

Status PolicyRunner::RunPhases(Engine* engine, PolicyRun* run) {
  for (Phase ph : setup_.flags.phases) {
    if (ph == Phase::kMultiGet && !engine->has_multiget()) {
      if (!noted_multiget_) {
        report_->notes.push_back(
            run->engine + " has no MultiGet: its multiget phase is not run");
        noted_multiget_ = true;
      }
      continue;
    }
    progress_->Begin(tag_ + ": " + PhaseName(ph));
    PhaseResult result;
    Status err = RunPhase(
        engine, keys_, ph, lookup_,
        [this](uint64_t done, uint64_t total) { ProgressUpdate(done, total); },
        &result);
    if (!err.ok()) {
      return Status::Corruption(std::string(PhaseName(ph)) + ": " +
                                err.message());
    }
    char summary[96];
    std::snprintf(summary, sizeof(summary), "%.4f reads/op over %llu ops",
                  result.reads_per_op(),
                  static_cast<unsigned long long>(result.ops));
    progress_->End(summary);
    run->phases.push_back(result);
  }
  return Status::OK();
}

// RocksDB's filter memory: what the table readers hold beyond the same
// tables without filters (policy none).
void AccountFilterMemory(const Flags& flags, Report* report) {
  if (!(flags.engines & kRocksDB)) return;
  const PolicyRun* none = report->FindRun("rocksdb", "none");
  for (PolicyRun& r : report->runs) {
    if (r.engine != "rocksdb" || r.skipped || none == nullptr) continue;
    r.build.filter_memory_bytes = std::max<int64_t>(
        0, static_cast<int64_t>(r.build.table_reader_memory) -
               static_cast<int64_t>(none->build.table_reader_memory));
  }
  report->notes.push_back(
      none != nullptr
          ? "rocksdb mem bits/key: rocksdb.estimate-table-readers-mem minus "
            "that of the same tables without filters (policy none)"
          : "rocksdb mem bits/key unknown: add policy none to measure it");
}

// Checks one RocksDB phase's counts against RocksDB's own perf context; a
// disagreement becomes a note. Sets *merged_multiget when MultiGet merged
// block reads (more perf-context blocks than read requests).
void CrossCheckPhase(const PolicyRun& r, const PhaseResult& ph,
                     bool* merged_multiget, Report* report) {
  auto get = [&ph](const char* name) -> uint64_t {
    auto it = ph.engine.find(name);
    return it == ph.engine.end() ? 0 : it->second;
  };
  const std::string what =
      "cross-check: rocksdb " + r.label + " " + PhaseName(ph.phase) + ": ";
  const uint64_t blocks = get("perf.block_read_count");
  if (ph.phase == Phase::kMultiGet && blocks >= ph.io.reads) {
    *merged_multiget = *merged_multiget || blocks > ph.io.reads;
  } else if (blocks != ph.io.reads) {
    report->notes.push_back(what + "perf_context block_read_count " +
                            std::to_string(blocks) + " != counted reads " +
                            std::to_string(ph.io.reads));
  }
  const uint64_t other =
      get("perf.index_block_read_count") + get("perf.filter_block_read_count");
  if (other != 0) {
    report->notes.push_back(what + std::to_string(other) +
                            " index/filter block reads during lookups");
  }
  const uint64_t perf_probes =
      get("perf.bloom_sst_hit_count") + get("perf.bloom_sst_miss_count");
  if (perf_probes != ph.io.probes) {
    report->notes.push_back(what + "perf_context bloom_sst_hit+miss " +
                            std::to_string(perf_probes) +
                            " != counted probes " +
                            std::to_string(ph.io.probes));
  }
}

// Cross-checks against the engines' own counters, then the notes every
// report carries.
void CrossCheck(Report* report) {
  bool merged_multiget = false;
  for (const PolicyRun& r : report->runs) {
    if (r.skipped || r.engine != "rocksdb") continue;
    for (const PhaseResult& ph : r.phases) {
      CrossCheckPhase(r, ph, &merged_multiget, report);
    }
  }
  if (merged_multiget) {
    report->notes.push_back(
        "rocksdb multiget: reads/op counts read requests; MultiGet merges "
        "adjacent blocks of a file into one request, so RocksDB's "
        "perf_context block_read_count (in results.json) is a little higher");
  }
  report->notes.push_back(
      "FPR %: false 'may match' answers per probe of a table without the key; "
      "reads are counted by wrappers of the engines' file access (RocksDB "
      "FileSystem, LevelDB Env) on lookup threads only");
}

// Runs gnuplot on `script` in --out.
Status RunGnuplot(const std::string& script) {
  const std::string cmd = "cd " + harness::ShellQuote(FLAGS_out) +
                          " && gnuplot " + script + " </dev/null";
  if (std::system(cmd.c_str()) != 0) {
    return Status::NotSupported("gnuplot failed on " +
                                (fs::path(FLAGS_out) / script).string());
  }
  return Status::OK();
}

// Prints `text`; with --out, writes it to results.txt, `json` to
// results.json and each (name, contents) of `files` into --out.
Status PrintAndWrite(
    const std::string& text, const std::string& json,
    const std::vector<std::pair<std::string, std::string>>& files = {}) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  if (FLAGS_out.empty()) return Status::OK();
  const fs::path out(FLAGS_out);
  Status err = WriteFile(out / "results.txt", text);
  if (err.ok()) err = WriteFile(out / "results.json", json);
  for (const auto& [name, contents] : files) {
    if (err.ok()) err = WriteFile(out / name, contents);
  }
  return err;
}

// Draws the charts with gnuplot into --out.
Status Plot(const Report& report, const std::string& png_terminal,
            Progress* progress) {
  const fs::path out(FLAGS_out);
  const std::string data = FormatPlotData(report);
  if (data.empty()) {
    progress->Note(
        "sstfilter_compare: no filter ran an absent phase; no charts");
    return Status::OK();
  }
  Status s = WriteFile(out / "plot.dat", data);
  if (s.ok()) {
    s = WriteFile(out / "plots.gp", FormatPlotScript(report, png_terminal));
  }
  if (!s.ok()) return s;
  return RunGnuplot("plots.gp");
}

// Prints the table and writes the result files (and charts) into --out.
Status WriteResults(const Report& report, const Flags& flags,
                    Progress* progress) {
  const std::string text = FormatText(report);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  if (FLAGS_out.empty()) return Status::OK();
  std::error_code ec;
  fs::create_directories(FLAGS_out, ec);
  if (ec) return Bad("--out " + FLAGS_out + ": " + ec.message());
  const fs::path out(FLAGS_out);
  const std::pair<const char*, std::string> files[] = {
      {"results.txt", text},
      {"results.csv", FormatCsv(report)},
      {"results.json", FormatJson(report)}};
  for (const auto& [name, contents] : files) {
    Status s = WriteFile(out / name, contents);
    if (!s.ok()) return s;
  }
  if (FLAGS_plot) {
    Status s = Plot(report, flags.png_terminal, progress);
    if (!s.ok()) return s;
  }
  std::printf("\nResults: %s\n", FLAGS_out.c_str());
  return Status::OK();
}

Progress MakeProgress() {
  const char* term = std::getenv("TERM");
  return Progress(FLAGS_progress, ::isatty(STDERR_FILENO) == 1 &&
                                      term != nullptr &&
                                      std::string(term) != "dumb");
}

// --memory: memory_workload.h; results.txt, results.json and the charts.
int RunMemory(Setup* setup, const std::string& command) {
  Report report;
  Status err = Prepare(setup, &report);
  if (!err.ok()) return Fail(kRunError, err);
  DescribeSetup(*setup, command, &report);
  MemoryReport memory;
  for (const auto& [name, value] : report.header) {
    if (name == "lookups") {
      memory.header.push_back(
          {"gets",
           std::to_string(FLAGS_reads) +
               " measured Gets per database and workload" +
               (FLAGS_phase_seconds > 0
                    ? " (or " + FormatNumber(FLAGS_phase_seconds) + " s)"
                    : std::string()) +
               ", " + std::to_string(FLAGS_threads) +
               " threads, after a warm-up of steps of " +
               std::to_string(setup->flags.memory_options.warmup_chunk) +
               " Gets until the block cache's hit rate moves by at most " +
               FormatNumber(100 * setup->flags.memory_options.settle) +
               " points (or 3 standard deviations of its sampling) from one "
               "step to the next"});
    } else if (name == "rocksdb tree") {
      const std::string tree = RocksDBTreeText(setup->flags);
      memory.header.push_back({name, tree.substr(0, tree.find("; 4 KiB"))});
    } else {
      memory.header.push_back({name, value});
    }
  }
  if (setup->flags.engines & kRocksDB) {
    memory.header.push_back(
        {"rocksdb memory",
         "one LRU block cache per database and workload, the budget's size, "
         "holding data, index and filter blocks "
         "(cache_index_and_filter_blocks, "
         "pin_l0_filter_and_index_blocks_in_cache" +
             std::string(FLAGS_partitioned ? ", partitioned index and filters"
                                           : "") +
             "); " +
             std::string(setup->EngineFor(kRocksDB)->io_mode())
                 .substr(0, setup->EngineFor(kRocksDB)->io_mode().find(
                                ", no block"))});
  }
  if (setup->flags.engines & kLevelDB) {
    memory.header.push_back(
        {"leveldb memory",
         "one LRU block cache per database and workload, the budget's size, "
         "holding data blocks; the open tables hold their index and filter "
         "blocks outside it (\"outside\"); reads through the page cache "
         "(LevelDB has no direct I/O), so Gets per second and latencies "
         "also profit from the page cache, beyond the budget"});
  }
  Progress progress = MakeProgress();
  const KeySpace keys(FLAGS_num, FLAGS_key_size, FLAGS_value_size, FLAGS_seed);
  MemoryWorkloadOptions& options = setup->flags.memory_options;
  options.dir = setup->base;
  for (size_t e = 0; e < setup->engines.size(); e++) {
    options.runs =
        PlanRuns(setup->flags.policies, setup->flags.engine_order[e]);
    err = RunMemoryWorkload(options, keys, setup->engines[e].get(), &progress,
                            &memory);
    if (!err.ok()) return Fail(kRunError, err);
  }
  const std::vector<std::pair<std::string, std::string>> charts =
      FLAGS_plot ? FormatMemoryPlots(memory, setup->flags.png_terminal)
                 : std::vector<std::pair<std::string, std::string>>();
  err =
      PrintAndWrite(FormatMemoryText(memory), FormatMemoryJson(memory), charts);
  if (err.ok() && !charts.empty()) err = RunGnuplot("memory.gp");
  if (!err.ok()) return Fail(kRunError, err);
  if (!FLAGS_out.empty()) std::printf("\nResults: %s\n", FLAGS_out.c_str());
  return 0;
}

// --workload=range: range_workload.h; results.txt and results.json.
int RunRange(Setup* setup, const std::string& command) {
  Status err = MakeBase(setup);
  if (!err.ok()) return Fail(kRunError, err);
  Report lookup;
  DescribeSetup(*setup, command, &lookup);
  RangeReport report;
  for (const auto& [name, value] : lookup.header) {
    if (name == "lookups") {
      report.header.push_back(
          {"scans",
           std::to_string(FLAGS_scans) +
               " per rival, length and kind (empty or not), on one thread; "
               "each without and with the rival, alternating; data blocks "
               "never cached (fill_cache=false), index and filter blocks in "
               "a 64 MiB block cache; reads through the page cache"});
    } else if (name == "rocksdb tree") {
      report.header.push_back(
          {name,
           RocksDBTreeText(setup->flags)
               .substr(0, RocksDBTreeText(setup->flags).find("; reopened"))});
    } else {
      report.header.push_back({name, value});
    }
  }
  Progress progress = MakeProgress();
  const KeySpace keys(FLAGS_num, FLAGS_key_size, FLAGS_value_size, FLAGS_seed);
  setup->flags.range_options.dir = setup->base;
  err = RunRangeWorkload(setup->flags.range_options, keys, &progress, &report);
  if (!err.ok()) return Fail(kRunError, err);
  err = PrintAndWrite(FormatRangeText(report), FormatRangeJson(report));
  if (!err.ok()) return Fail(kRunError, err);
  if (!FLAGS_out.empty()) std::printf("\nResults: %s\n", FLAGS_out.c_str());
  return 0;
}

int Run(const std::vector<std::string>& positional,
        const std::string& command) {
  if (!positional.empty()) {
    return Fail(kUsageError, Bad("unexpected argument \"" + positional[0] +
                                 "\" (flags are --name=value)"));
  }
  Setup setup;
  const Status bad = CheckFlags(&setup.flags);
  if (!bad.ok()) return Fail(kUsageError, bad);
  if (setup.flags.range) return RunRange(&setup, command);
  if (setup.flags.memory) return RunMemory(&setup, command);
  Report report;
  Status err = Prepare(&setup, &report);
  if (setup.plan.empty()) return Fail(kUsageError, err);
  if (!err.ok()) return Fail(kRunError, err);
  DescribeSetup(setup, command, &report);

  Progress progress = MakeProgress();
  progress.Note("sstfilter_compare: " + std::to_string(setup.plan.size()) +
                " runs of " + std::to_string(FLAGS_num) +
                " keys; databases in " + setup.base);
  const KeySpace keys(FLAGS_num, FLAGS_key_size, FLAGS_value_size, FLAGS_seed);
  PolicyRunner runner(setup, keys, &progress, &report);
  for (size_t i = 0; i < setup.plan.size(); i++) {
    err = runner.Run(static_cast<int>(i + 1), setup.plan[i]);
    if (!err.ok()) return Fail(kRunError, err);
  }
  AccountFilterMemory(setup.flags, &report);
  CrossCheck(&report);
  err = WriteResults(report, setup.flags, &progress);
  return err.ok() ? 0 : Fail(kRunError, err);
}

}  // namespace
}  // namespace compare
}  // namespace sstfilter

int main(int argc, char** argv) {
  std::string command;
  for (int i = 0; i < argc; i++) {
    command +=
        (i ? " " : "") + std::string(i == 0 ? "sstfilter_compare" : argv[i]);
  }
  gflags::SetVersionString(SSTFILTER_VERSION);
  using sstfilter::compare::ParsedArgs;
  const ParsedArgs args = sstfilter::compare::ParseArgs(argc, argv);
  int code = 0;
  switch (args.what) {
    case ParsedArgs::kHelp:
      std::fputs(sstfilter::compare::HelpText().c_str(), stdout);
      break;
    case ParsedArgs::kVersion:
      std::printf("sstfilter_compare %s\n", SSTFILTER_VERSION);
      break;
    case ParsedArgs::kBad:
      code =
          sstfilter::compare::Fail(sstfilter::compare::kUsageError, args.error);
      break;
    case ParsedArgs::kRun:
      code = sstfilter::compare::Run(args.positional, command);
      break;
  }
  gflags::ShutDownCommandLineFlags();
  return code;
}
