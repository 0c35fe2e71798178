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
// Flags are written --name=value or --name value, anywhere on the line;
// "--" ends them. Exit status: 0 on success (--help and --version
// included), 1 when a file cannot be read, 2 for bad arguments, an
// unknown or malformed flag among them (with a message on stderr saying
// which).

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

namespace sstfilter {
namespace tool {
namespace {

constexpr char kCommands[] =
    "  sstfilter params --keys=N --fpr=P [--kind=K]\n"
    "      bits per key, probes or fingerprint bits, bytes and expected FPR\n"
    "      of the smallest filter of each kind that reaches FPR P for N keys\n"
    "      (the range kind in a table of its own, for empty ranges of 1 to\n"
    "      4096 images; --kind=range prints that table only)\n"
    "  sstfilter params --levels=N,N,... [--bits=B] [--kind=K]\n"
    "      bits per key of each level's filter that make the fewest false\n"
    "      positives per absent lookup for B bits per key in all\n"
    "  sstfilter inspect FILE.sst|FILE.ldb...\n"
    "      the filter of RocksDB SST files and LevelDB tables: policy, size,\n"
    "      bits per key, level in its database, and whether an sstfilter\n"
    "      reader can read it (a keyed filter: only with its secret)\n"
    "  sstfilter dedup [--expect=N] [--fpr=P] [--kind=K]\n"
    "      prints each line of stdin the first time it is (probably) seen,\n"
    "      as a crawler's URL filter would; counts on stderr\n";

// A flag of the command line: its name, what it is for, its default, and
// the value given, if any.
struct Flag {
  Flag(const char* n, const char* h, const char* d)
      : name(n), help(h), default_value(d) {}
  const char* name;
  const char* help;
  const char* default_value;
  std::string value;
  bool set = false;
};

// Every flag the command knows (the only ones --help lists).
std::vector<Flag>& Flags() {
  static std::vector<Flag> flags = {
      {"keys", "params: number of distinct keys (required), e.g. 1e6", ""},
      {"fpr", "params, dedup: target false-positive rate, within (0, 1)",
       "0.01"},
      {"kind",
       "params: show this kind only (default: every kind); dedup: the "
       "mutable kind to use",
       ""},
      {"levels",
       "params: keys per run of an LSM tree, comma-separated, e.g. "
       "1e6,1e7,1e8 (each L0 file its own run): prints the bits per key of "
       "each run's filter for --bits on average",
       ""},
      {"bits", "params --levels: average bits per key of the tree", "10"},
      {"expect",
       "dedup: expected number of distinct lines (sizes the first filter)",
       "1e6"},
  };
  return flags;
}

Flag* FindFlag(std::string_view name) {
  for (Flag& f : Flags()) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

bool IsDefault(const char* flag) { return !FindFlag(flag)->set; }

// What the command line asked for besides the flags.
struct CommandLine {
  std::vector<std::string> args;  // the command and its files, in order
  bool help = false;
  bool version = false;
};

// Reads argv into Flags() and *out. Errors name the flag.
Status ParseCommandLine(int argc, char** argv, CommandLine* out) {
  bool flags_done = false;
  for (int i = 1; i < argc; i++) {
    const std::string_view arg = argv[i];
    if (flags_done || arg.size() < 2 || arg[0] != '-') {
      out->args.emplace_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_done = true;
      continue;
    }
    std::string_view name = arg.substr(arg[1] == '-' ? 2 : 1);
    const size_t eq = name.find('=');
    const bool has_value = eq != std::string_view::npos;
    std::string_view value = has_value ? name.substr(eq + 1) : "";
    if (has_value) name = name.substr(0, eq);
    if (!has_value && (name == "help" || name == "h" || name == "helpshort" ||
                       name == "helpfull")) {
      out->help = true;
      continue;
    }
    if (!has_value && name == "version") {
      out->version = true;
      continue;
    }
    Flag* f = FindFlag(name);
    if (f == nullptr) {
      return Status::InvalidArgument("unknown flag \"" + std::string(arg) +
                                     "\" (sstfilter --help lists the flags)");
    }
    const std::string dashed = "--" + std::string(name);
    if (!has_value) {
      if (i + 1 == argc) {
        return Status::InvalidArgument(dashed + " needs a value (" + dashed +
                                       "=...)");
      }
      value = argv[++i];
    }
    if (value.empty()) {
      return Status::InvalidArgument(dashed + " needs a value, got \"\"");
    }
    if (f->set) return Status::InvalidArgument(dashed + " given twice");
    f->value = std::string(value);
    f->set = true;
  }
  return Status::OK();
}

// Flag `name` as a number: a decimal such as 0.01 or 1e-6.
Status NumberFlag(const char* name, double* out) {
  const Flag* f = FindFlag(name);
  const std::string text = f->set ? f->value : f->default_value;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v)) {
    return Status::InvalidArgument("--" + std::string(name) + ": \"" + text +
                                   "\" is not a number");
  }
  *out = v;
  return Status::OK();
}

// Flag `name` as text: the value given, else its default.
std::string TextFlag(const char* name) {
  const Flag* f = FindFlag(name);
  return f->set ? f->value : f->default_value;
}

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

// --help: this program's commands and flags.
void PrintHelp() {
  std::printf("answers about sstfilter filters.\n\nusage:\n%s\nflags:\n",
              kCommands);
  for (const Flag& f : Flags()) {
    std::printf("  --%s (%s) default: \"%s\"\n", f.name, f.help,
                f.default_value);
  }
  std::printf(
      "  --help    prints this and exits\n"
      "  --version prints the version and exits\n");
}

// A flag set on a command that ignores it is a mistake worth reporting.
std::string UnusedFlag(const std::vector<std::string>& used) {
  for (const Flag& f : Flags()) {
    bool ok = false;
    for (const std::string& u : used) ok = ok || u == f.name;
    if (!ok && f.set) return f.name;
  }
  return "";
}

// The form of a command line: its command, or "params --levels" for the
// form of params that plans levels.
std::string FormOf(const std::string& command) {
  return command == "params" && !IsDefault("levels") ? "params --levels"
                                                     : command;
}

// The flags each form reads; any other flag set is a mistake.
std::vector<std::string> FlagsOf(const std::string& form) {
  if (form == "params --levels") return {"levels", "bits", "kind"};
  if (form == "params") return {"keys", "fpr", "kind"};
  if (form == "dedup") return {"expect", "fpr", "kind"};
  return {};  // inspect
}

// --fpr, within (0, 1).
Status FprFlag(double* fpr) {
  Status s = NumberFlag("fpr", fpr);
  if (s.ok() && !(*fpr > 0 && *fpr < 1)) {
    s = Status::InvalidArgument("--fpr must be within (0, 1), got " +
                                TextFlag("fpr"));
  }
  return s;
}

int RunLevelParams(const std::vector<std::string>& args) {
  if (!args.empty()) return Usage("params takes no file arguments");
  std::vector<uint64_t> levels;
  double bits = 0;
  Status s = ParseLevels(TextFlag("levels"), &levels);
  if (s.ok()) s = NumberFlag("bits", &bits);
  if (!s.ok()) return Usage(s.message());
  return LevelParams(levels, bits, TextFlag("kind"));
}

int RunParams(const std::vector<std::string>& args) {
  if (!args.empty()) return Usage("params takes no file arguments");
  const std::string kind = TextFlag("kind");
  const Status needs_keys =
      Status::InvalidArgument("params needs --keys=N with N > 0");
  uint64_t keys = 0;
  double fpr = 0;
  Status s = IsDefault("keys") ? needs_keys
                               : ParseCount("keys", TextFlag("keys"), &keys);
  if (s.ok() && keys == 0) s = needs_keys;
  if (s.ok()) s = FprFlag(&fpr);
  if (!s.ok()) return Usage(s.message());
  if (kind == "range") return RangeParams(keys, fpr);
  return Params(keys, fpr, kind);
}

int RunDedup(const std::vector<std::string>& args) {
  if (!args.empty()) return Usage("dedup reads stdin and takes no files");
  uint64_t expect = 0;
  double fpr = 0;
  Status s = FprFlag(&fpr);
  if (s.ok()) s = ParseCount("expect", TextFlag("expect"), &expect);
  if (!s.ok()) return Usage(s.message());
  if (expect == 0) return Usage("--expect must be > 0");
  return Dedup(expect, fpr, TextFlag("kind"));
}

}  // namespace

int Main(int argc, char** argv) {
  CommandLine line;
  const Status parsed = ParseCommandLine(argc, argv, &line);
  if (!parsed.ok()) return Usage(parsed.message());
  if (line.help) {
    PrintHelp();
    return 0;
  }
  if (line.version) {
    std::printf("sstfilter version %s\n", SSTFILTER_VERSION);
    return 0;
  }
  if (line.args.empty()) return Usage("no command given");
  const std::string command = line.args[0];
  const std::vector<std::string> args(line.args.begin() + 1, line.args.end());
  if (command != "params" && command != "inspect" && command != "dedup") {
    return Usage("unknown command \"" + command +
                 "\"; expected params, inspect or dedup");
  }
  const std::string form = FormOf(command);
  const std::string unused = UnusedFlag(FlagsOf(form));
  if (!unused.empty()) {
    return Usage("--" + unused + " does not apply to " + form);
  }
  if (form == "params --levels") return RunLevelParams(args);
  if (command == "params") return RunParams(args);
  if (command == "dedup") return RunDedup(args);
  if (args.empty()) return Usage("inspect needs at least one FILE.sst");
  return Inspect(args);
}

}  // namespace tool
}  // namespace sstfilter

int main(int argc, char** argv) { return sstfilter::tool::Main(argc, argv); }
