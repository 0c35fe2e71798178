// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The `sstfilter` command: answers about filters without writing code.
//
//   sstfilter params --keys=N --fpr=P [--kind=K]   size a filter, every kind
//   sstfilter params --levels=N,N,... --bits=B      bits per level of a tree
//   sstfilter inspect FILE.sst|FILE.ldb...          filters and levels of
//   tables sstfilter dedup [--expect=N --fpr=P]            print stdin lines
//   once
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
#include "tools/commands.h"

DEFINE_uint64(keys, 0, "params: number of distinct keys (required)");
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

DEFINE_uint64(expect, 1000000,
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

int Main(int argc, char** argv) {
  gflags::SetUsageMessage(std::string("answers about sstfilter filters.\n\n") +
                          kCommands);
  gflags::SetVersionString(SSTFILTER_VERSION);  // CMake's project(VERSION)
  // --help shows this file's flags only: librocksdb defines many of its own.
  gflags::ParseCommandLineNonHelpFlags(&argc, &argv, /*remove_flags=*/true);
  if (FLAGS_help || FLAGS_helpshort) {
    gflags::ShowUsageWithFlagsRestrict(argv[0], "sstfilter_main.cc");
    return 0;
  }
  gflags::HandleCommandLineHelpFlags();  // --version, --helpfull, ...
  if (argc < 2) return Usage("no command given");
  const std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);

  std::vector<std::string> used;
  if (command == "params" && !IsDefault("levels")) {
    used = {"levels", "bits", "kind"};
  } else if (command == "params") {
    used = {"keys", "fpr", "kind"};
  } else if (command == "inspect") {
    used = {};
  } else if (command == "dedup") {
    used = {"expect", "fpr", "kind"};
  } else {
    return Usage("unknown command \"" + command +
                 "\"; expected params, inspect or dedup");
  }
  const std::string unused = UnusedFlag(used);
  if (!unused.empty()) {
    return Usage("--" + unused + " does not apply to " + command);
  }

  if (command == "params" && !IsDefault("levels")) {
    if (!args.empty()) return Usage("params takes no file arguments");
    std::vector<uint64_t> levels;
    std::string_view rest = FLAGS_levels;
    while (true) {
      const std::string item(rest.substr(0, rest.find(',')));
      // Numbers like 1e8 are welcome; each must be a whole count of keys.
      char* end = nullptr;
      const double v = std::strtod(item.c_str(), &end);
      if (item.empty() || end != item.c_str() + item.size() || !(v >= 0) ||
          v > 1e15 || v != std::floor(v)) {
        return Usage("--levels: \"" + item +
                     "\" is not a key count (e.g. 1e6,1e7,1e8)");
      }
      levels.push_back(static_cast<uint64_t>(v));
      if (rest.find(',') == std::string_view::npos) break;
      rest.remove_prefix(rest.find(',') + 1);
    }
    return LevelParams(levels, FLAGS_bits, FLAGS_kind);
  }
  if (command == "params") {
    if (!args.empty()) return Usage("params takes no file arguments");
    if (IsDefault("keys") || FLAGS_keys == 0) {
      return Usage("params needs --keys=N with N > 0");
    }
    if (!(FLAGS_fpr > 0 && FLAGS_fpr < 1)) {
      return Usage("--fpr must be within (0, 1), got " +
                   std::to_string(FLAGS_fpr));
    }
    if (FLAGS_kind == "range") return RangeParams(FLAGS_keys, FLAGS_fpr);
    return Params(FLAGS_keys, FLAGS_fpr, FLAGS_kind);
  }
  if (command == "inspect") {
    if (args.empty()) return Usage("inspect needs at least one FILE.sst");
    return Inspect(args);
  }
  // dedup
  if (!args.empty()) return Usage("dedup reads stdin and takes no files");
  if (!(FLAGS_fpr > 0 && FLAGS_fpr < 1)) {
    return Usage("--fpr must be within (0, 1), got " +
                 std::to_string(FLAGS_fpr));
  }
  if (FLAGS_expect == 0) return Usage("--expect must be > 0");
  return Dedup(FLAGS_expect, FLAGS_fpr, FLAGS_kind);
}

}  // namespace tool
}  // namespace sstfilter

int main(int argc, char** argv) { return sstfilter::tool::Main(argc, argv); }
