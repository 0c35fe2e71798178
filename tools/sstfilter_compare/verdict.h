// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The answer a comparison gives to "which filter should I use?", one per
// engine: among the equal-memory pairs that ran (X@Y with one side an
// sstfilter policy and the other a built-in filter), our policy whose
// absent-key reads are the lowest multiple of those of the strongest
// built-in given the same filter bytes, and which of the two reads less.

#ifndef SSTFILTER_TOOLS_COMPARE_VERDICT_H_
#define SSTFILTER_TOOLS_COMPARE_VERDICT_H_

#include <string>
#include <vector>

#include "tools/sstfilter_compare/results.h"

namespace sstfilter {
namespace compare {

// `ours` and `rival` point into the report's runs: valid while the report
// lives and its runs do not change.
struct Verdict {
  std::string engine;                // "rocksdb"
  const PolicyRun* ours = nullptr;   // null: no equal-memory pair ran
  const PolicyRun* rival = nullptr;  // the built-in at ours' memory
  // Absent-key reads per Get of ours over the rival's: 1 if neither read a
  // block, -1 if only ours did.
  double ratio = -1;
  double bytes_ratio = 0;  // the rival's filter bytes over ours
  // What ours costs beside the rival, ours over the rival's: the absent
  // phase's p50 and p99 latency per Get, and the seconds spent building
  // filters in the load. -1 if the rival's figure is 0.
  double p50_ratio = -1;
  double p99_ratio = -1;
  double build_ratio = -1;
  std::string text;  // the line printed: "RocksDB: ribbon:10 reads ..."
};

// One verdict per engine of the report, in the report's engine order.
std::vector<Verdict> Verdicts(const Report& report);

}  // namespace compare
}  // namespace sstfilter

#endif  // SSTFILTER_TOOLS_COMPARE_VERDICT_H_
