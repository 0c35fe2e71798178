// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The commands of the `sstfilter` tool, each returning the process's exit
// status. Arguments are checked by tools/sstfilter_main.cc before the call.

#ifndef SSTFILTER_TOOLS_COMMANDS_H_
#define SSTFILTER_TOOLS_COMMANDS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace sstfilter {
namespace tool {

// Exit status for bad arguments found inside a command.
inline constexpr int kUsageError = 2;

// Prints the smallest filter of each point kind (or of `kind` only, if not
// empty) reaching `fpr` for `keys` keys; with every kind, the range kind's
// table (RangeParams) follows. REQUIRES: keys > 0, 0 < fpr < 1.
int Params(uint64_t keys, double fpr, const std::string& kind);

// The same for the range kind (sstfilter/range.h): bits per key and bytes
// of a range filter of `keys` distinct images whose empty ranges of 1, 16,
// 256 and 4096 images read "may contain" with probability at most `fpr`.
int RangeParams(uint64_t keys, double fpr);

// Prints the bits per key PlanLevelBits gives each run of a tree with
// `levels` keys per run (each L0 file its own run), at `bits` bits per key
// on average, for every static kind or `kind` only, beside uniform bits.
// A kind that cannot plan `bits` is named on stderr with the reason; 2 if
// no kind can. REQUIRES: levels not empty.
int LevelParams(const std::vector<uint64_t>& levels, double bits,
                const std::string& kind);

// Prints the filter of each RocksDB SST file. 1 if any cannot be read.
int Inspect(const std::vector<std::string>& files);

// Copies stdin to stdout, dropping lines a chain of mutable filters has
// (probably) seen before, at most a share `fpr` of new lines whatever their
// number; counts on stderr. REQUIRES: expect > 0, 0 < fpr < 1.
int Dedup(uint64_t expect, double fpr, const std::string& kind);

}  // namespace tool
}  // namespace sstfilter

#endif  // SSTFILTER_TOOLS_COMMANDS_H_
