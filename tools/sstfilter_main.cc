// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The `sstfilter` command: answers about filters without writing code.
//
//   sstfilter params --keys=N --fpr=P [--kind=K]  size a filter, every kind
//   sstfilter params --levels=N,N,... --bits=B     bits per level of a tree
//   sstfilter inspect FILE.sst|FILE.ldb...         filters and levels
//   sstfilter dedup [--expect=N --fpr=P]           print stdin lines once
//
// Counts (--keys, --expect, each of --levels) are whole numbers written as
// integers or in exponent form: 1000000, 1e6, 2.5e6.
//
// Exit status: 0 on success, 1 when a file cannot be read, 2 for bad
// arguments (with a message on stderr saying which).

#include <gflags/gflags.h>

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "sstfilter/filter.h"
#include "sstfilter/params.h"
#include "sstfilter/spec.h"
#include "sstfilter/status.h"
#include "tools/commands.h"

DEFINE_string(keys, "", "params: number of distinct keys (required), e.g. 1e6");
DEFINE_double(fpr, 0.01,
              "params, dedup: target false-positive rate, within (0, 1)");
DEFINE_string(kind, "",
              "params: show this kind only (default: every kind); dedup: "
              "the mutable kind to use");
DEFINE_string(levels, "",
              "params: keys per run of an LSM tree, comma-separated, e.g. "
              "1e6,1e7,1e8 (each L0 file its own run): prints the bits per "
              "key of each run's filter for --bits on average");
DEFINE_double(bits, 10, "params --levels: average bits per key of the tree");
DECLARE_bool(help);
DECLARE_bool(helpshort);

DEFINE_string(expect, "1e6",
              "dedup: expected number of distinct lines (sizes the filter)");

namespace sstfilter {
namespace tool {
namespace {

constexpr char kCommands[] =
    "  sstfilter params --keys=N --fpr=P [--kind=K]\n"
    "      bits per key, probes or fingerprint bits, bytes and expected FPR\n"
    "      of the smallest filter of each kind that reaches FPR P for N keys\n"
    "      (--kind=range: the range filter, for ranges of 1 to 4096 images)\n"
    "  sstfilter params --levels=N,N,... [--bits=B] [--kind=K]\n"
    "      bits per key of each level's filter that make the fewest false\n"
    "      positives per absent lookup for B bits per key in all\n"
    "  sstfilter inspect FILE.sst|FILE.ldb...\n"
    "      the filter of RocksDB SST files and LevelDB tables: policy, size,\n"
    "      bits per key, level in its database, and whether an sstfilter\n"
    "      reader can read it\n"
    "  sstfilter dedup [--expect=N] [--fpr=P] [--kind=K]\n"
    "      prints each line of stdin the first time it is (probably) seen,\n"
    "      as a crawler's URL filter would; counts on stderr\n";

int Usage(const std::string& problem) {
  std::fprintf(stderr, "sstfilter: %s\nusage:\n%s", problem.c_str(), kCommands);
  return kUsageError;
}

// A count of keys or lines: a whole number in [0, 10^15], written as an
// integer or in exponent form ("1e6").
Status ParseCount(const std::string& flag, const std::string& text,
                  uint64_t* out) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(v >= 0) ||
      v > 1e15 || v != std::floor(v)) {
    return Status::InvalidArgument("--" + flag + ": \"" + text +
                                   "\" is not a count (e.g. 1000000 or 1e6)");
  }
  *out = static_cast<uint64_t>(v);
  return Status::OK();
}

// --levels: counts separated by commas.
Status ParseLevels(const std::string& text, std::vector<uint64_t>* levels) {
  std::string_view rest = text;
  while (true) {
    const size_t comma = rest.find(',');
    uint64_t n = 0;
    Status s = ParseCount("levels", std::string(rest.substr(0, comma)), &n);
    if (!s.ok()) return s;
    levels->push_back(n);
    if (comma == std::string_view::npos) return Status::OK();
    rest.remove_prefix(comma + 1);
  }
}

// --help: this program's flags, by name, without the build paths gflags
// prints (and without the hundreds of flags librocksdb defines).
void PrintHelp() {
  std::printf("answers about sstfilter filters.\n\nusage:\n%s\nflags:\n",
              kCommands);
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  for (const gflags::CommandLineFlagInfo& f : flags) {
    const std::string& file = f.filename;
    if (file.size() < 17 ||
        file.compare(file.size() - 17, 17, "sstfilter_main.cc") != 0) {
      continue;
    }
    std::printf("  --%s (%s) default: \"%s\"\n", f.name.c_str(),
                f.description.c_str(), f.default_value.c_str());
  }
}

bool IsDefault(const char* flag) {
  return gflags::GetCommandLineFlagInfoOrDie(flag).is_default;
}

// A flag set on a command that ignores it is a mistake worth reporting.
std::string UnusedFlag(const std::vector<std::string>& used) {
  for (const char* f : {"keys", "fpr", "kind", "expect", "levels", "bits"}) {
    bool ok = false;
    for (const std::string& u : used) ok = ok || u == f;
    if (!ok && !IsDefault(f)) return f;
  }
  return "";
}

}  // namespace

// The flags each command reads; any other flag set is a mistake.
std::vector<std::string> FlagsOf(const std::string& command) {
  if (command == "params" && !IsDefault("levels")) {
    return {"levels", "bits", "kind"};
  }
  if (command == "params") return {"keys", "fpr", "kind"};
  if (command == "dedup") return {"expect", "fpr", "kind"};
  return {};  // inspect
}

Status CheckFpr() {
  if (FLAGS_fpr > 0 && FLAGS_fpr < 1) return Status::OK();
  return Status::InvalidArgument("--fpr must be within (0, 1), got " +
                                 std::to_string(FLAGS_fpr));
}

int RunParams(const std::vector<std::string>& args) {
  if (!args.empty()) return Usage("params takes no file arguments");
  if (!IsDefault("levels")) {
    std::vector<uint64_t> levels;
    const Status s = ParseLevels(FLAGS_levels, &levels);
    if (!s.ok()) return Usage(s.message());
    return LevelParams(levels, FLAGS_bits, FLAGS_kind);
  }
  const Status needs_keys =
      Status::InvalidArgument("params needs --keys=N with N > 0");
  uint64_t keys = 0;
  Status s =
      IsDefault("keys") ? needs_keys : ParseCount("keys", FLAGS_keys, &keys);
  if (s.ok() && keys == 0) s = needs_keys;
  if (s.ok()) s = CheckFpr();
  if (!s.ok()) return Usage(s.message());
  if (FLAGS_kind == "range") return RangeParams(keys, FLAGS_fpr);
  return Params(keys, FLAGS_fpr, FLAGS_kind);
}

int RunDedup(const std::vector<std::string>& args) {
  if (!args.empty()) return Usage("dedup reads stdin and takes no files");
  uint64_t expect = 0;
  Status s = CheckFpr();
  if (s.ok()) s = ParseCount("expect", FLAGS_expect, &expect);
  if (!s.ok()) return Usage(s.message());
  if (expect == 0) return Usage("--expect must be > 0");
  return Dedup(expect, FLAGS_fpr, FLAGS_kind);
}

int Main(int argc, char** argv) {
  gflags::SetUsageMessage(std::string("answers about sstfilter filters.\n\n") +
                          kCommands);
  gflags::SetVersionString(SSTFILTER_VERSION);  // CMake's project(VERSION)
  gflags::ParseCommandLineNonHelpFlags(&argc, &argv, /*remove_flags=*/true);
  if (FLAGS_help || FLAGS_helpshort) {
    PrintHelp();
    return 0;
  }
  gflags::HandleCommandLineHelpFlags();  // --version, --helpfull, ...
  if (argc < 2) return Usage("no command given");
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (command != "params" && command != "inspect" && command != "dedup") {
    return Usage("unknown command \"" + command +
                 "\"; expected params, inspect or dedup");
  }
  const std::string unused = UnusedFlag(FlagsOf(command));
  if (!unused.empty()) {
    return Usage("--" + unused + " does not apply to " + command);
  }
  if (command == "params") return RunParams(args);
  if (command == "dedup") return RunDedup(args);
  if (args.empty()) return Usage("inspect needs at least one FILE.sst");
  return Inspect(args);
}

}  // namespace tool
}  // namespace sstfilter

int main(int argc, char** argv) { return sstfilter::tool::Main(argc, argv); }
