// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The range workload (--workload=range, docs/COMPARE.md): short scans over
// [lower, upper) on natural RocksDB trees, each scan run without a range
// filter and with one of the rivals on the same database, alternating, and
// their keys compared. Rivals, one database each:
//
//   range:<B>             the range collector (sstfilter.range_collector)
//                         and RocksDBRangeScan's table_filter
//   rocksdb:prefix_bloom  RocksDB's Bloom with a fixed-prefix extractor and
//                         whole-key filtering; a range within one prefix is
//                         scanned with prefix_same_as_start, others in
//                         total order
//   rocksdb:sst_query_filter  RocksDB's min/max per table (9.7+); reported
//                         as not available on older releases
//
// Every database also has RocksDB's Bloom (10 bits per key) as its point
// filter, as a user combines them. Ranges are L images long in the space
// of the keys' first 8 bytes (harness/rocksdb_range_scan.h), the same
// ranges for every rival; "empty" ranges hold no key.

#ifndef SSTFILTER_TOOLS_COMPARE_RANGE_WORKLOAD_H_
#define SSTFILTER_TOOLS_COMPARE_RANGE_WORKLOAD_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "harness/rocksdb_range_scan.h"
#include "sstfilter/status.h"
#include "tools/sstfilter_compare/engine.h"
#include "tools/sstfilter_compare/progress.h"

namespace sstfilter {
namespace compare {

struct RangeWorkloadOptions {
  RocksDBTree tree;                      // natural (NaturalTree)
  uint64_t scans = 2000;                 // per rival, length, empty or not
  std::vector<uint64_t> lengths;         // in images, each >= 1
  std::vector<std::string> range_specs;  // "range:10", ...
  int prefix_bytes = 7;                  // of the prefix Bloom, 1..8
  std::string dir;                       // databases go in dir/range-<i>
  bool keep = false;                     // keep the databases
};

// One row: `scans` ranges of one length, empty or not, without a range
// filter (`none`) and with the rival (`with`), on the rival's database.
struct RangeRow {
  bool empty = true;
  uint64_t length = 1;
  harness::ScanCosts none, with;
  uint64_t fit = 0;  // prefix Bloom: ranges within one prefix
};

struct RangeRun {
  std::string name;  // "range:14", "rocksdb:prefix_bloom:7", ...
  std::string how;   // how it is configured and read
  bool skipped = false;
  std::string skip_reason;
  double load_seconds = 0;
  uint64_t tables = 0, entries = 0;
  std::string files_per_level;    // "L0 0, L1 0, ..., L6 1500"
  double rival_bits_per_key = 0;  // range filters or the prefix Bloom
  double point_bits_per_key = 0;  // RocksDB's Bloom (whole keys)
  // Microseconds per NewIterator over an empty range of 16 images and
  // over a non-empty one (harness::MeasureIteratorCreation).
  double create_none_us = 0, create_with_us = 0;
  double create_nonempty_none_us = 0, create_nonempty_with_us = 0;
  std::vector<RangeRow> rows;
};

// Building filters off line for every key, in tables of the mean keys per
// table of the first range database.
struct RangeBuildCost {
  std::string name;  // "range:14", "rocksdb:bloom:10"
  double ns_per_key = 0;
  double bits_per_key = 0;
};

// The range filter's FPR measured off line, with many more queries than
// the scans make: kFprQueries random ranges [lo, lo + length) holding no
// key of their table, spread over tables of keys_per_table keys, asked as
// scans ask (MayContainKeys of the 8-byte bounds).
struct RangeFpr {
  std::string spec;
  uint64_t length = 1;
  uint64_t queries = 0, positives = 0;
  double bound = 0;  // RangeFprBound
};
inline constexpr uint64_t kFprQueries = 1000000;

struct RangeReport {
  std::vector<std::pair<std::string, std::string>> header;
  std::vector<RangeRun> runs;
  uint64_t keys_per_table = 0;
  std::vector<RangeBuildCost> build;
  std::vector<RangeFpr> fpr;
};

// Runs every rival on `keys`. On error (an engine failure, or a filtered
// scan whose keys differ from the unfiltered one's) stops and says why.
Status RunRangeWorkload(const RangeWorkloadOptions& options,
                        const KeySpace& keys, Progress* progress,
                        RangeReport* report);

std::string FormatRangeText(const RangeReport& report);
std::string FormatRangeJson(const RangeReport& report);

}  // namespace compare
}  // namespace sstfilter

#endif  // SSTFILTER_TOOLS_COMPARE_RANGE_WORKLOAD_H_
