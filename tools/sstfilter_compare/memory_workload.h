// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The memory-budget workload (--memory, docs/COMPARE.md): which filter, at
// which bits per key, makes an engine fastest for the RAM it has. Each
// policy builds one database (RocksDB: natural tree, leveled or universal
// compaction); the database is then opened once per workload through a new
// LRU block cache of the budget. RocksDB's holds data, index and filter
// blocks (cache_index_and_filter_blocks, L0's filters and index pinned),
// read with direct I/O where the file system allows; LevelDB's holds data
// blocks, its tables' index and filter blocks stay outside (counted and
// reported), and it reads through the page cache. A workload is a budget,
// a share of absent keys and a key distribution; per workload, Gets run
// first as a warm-up until the cache's hit rate settles, then the measured
// Gets.
//
// Every filter thus pays for its own bytes: a smaller filter leaves more of
// the budget to data blocks. The runs of one family at several bits per
// key ('*' and --sweep_bits) find each family's best point for the budget.

#ifndef SSTFILTER_TOOLS_COMPARE_MEMORY_WORKLOAD_H_
#define SSTFILTER_TOOLS_COMPARE_MEMORY_WORKLOAD_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sstfilter/status.h"
#include "tools/sstfilter_compare/engine.h"
#include "tools/sstfilter_compare/policies.h"
#include "tools/sstfilter_compare/progress.h"
#include "tools/sstfilter_compare/results.h"

namespace sstfilter {
namespace compare {

// One workload: Gets through a block cache of `budget` bytes.
struct MemoryWorkload {
  uint64_t budget = 0;
  double absent_share = 0.5;  // of the Gets, for absent keys
  double zipf_theta = 0;      // 0: uniform keys

  std::string Name() const;  // "64 MiB, absent 0.9, zipf:0.99"
};

struct MemoryWorkloadOptions {
  std::vector<PlannedRun> runs;  // of one engine, plain (no X@Y)
  std::vector<MemoryWorkload> workloads;
  LookupOptions lookup;           // reads, threads, seed, time cap
  uint64_t warmup_chunk = 10000;  // Gets per warm-up step
  int max_warmup_chunks = 50;
  // The warm-up ends when the hit rate of two steps in a row differs by at
  // most this (absolute), or by less than 3 standard deviations of the
  // difference of two sampled rates.
  double settle = 0.005;
  // Each database must be at least this many times the largest budget.
  double min_db_over_budget = 8;
  bool partitioned = false;  // the tree's (RocksDBTree::partitioned)
  std::string dir;           // databases go in dir/memory-<i>
  bool keep = false;         // keep the databases
};

// One workload on one database.
struct MemoryPoint {
  MemoryWorkload workload;
  uint64_t warmup_gets = 0;
  bool settled = false;        // the warm-up's hit rate settled
  PhaseResult gets;            // Phase::kMixed; engine counters inside
  uint64_t cache_bytes = 0;    // the block cache's usage at the end
  uint64_t outside_bytes = 0;  // held by the database outside the cache

  // Per Get: blocks read from disk, by type (RocksDB's perf context;
  // LevelDB's reads are all data blocks), and the block cache's hit rate
  // by type (RocksDB's statistics; -1 if that type was never looked up, or
  // for LevelDB, which counts none).
  double DataReads() const;
  double IndexReads() const;
  double FilterReads() const;
  double HitRate(const char* type) const;  // "DATA", "INDEX", "FILTER", ""
};

struct MemoryRun {
  std::string engine;
  std::string label;
  Policy policy;
  bool skipped = false;
  std::string skip_reason;
  BuildResult build;
  std::vector<MemoryPoint> points;  // in MemoryWorkloadOptions' order

  double bits_per_key(uint64_t keys) const {
    return keys == 0 ? 0
                     : 8.0 * static_cast<double>(build.filter_block_bytes) /
                           static_cast<double>(keys);
  }
};

struct MemoryReport {
  std::vector<std::pair<std::string, std::string>> header;
  uint64_t num_keys = 0;
  std::vector<MemoryWorkload> workloads;
  std::vector<MemoryRun> runs;
  std::vector<std::string> notes;
};

// Builds each run's database on `engine` and measures every workload on
// it, adding the runs to *report. Stops with InvalidArgument, before any
// Get, if a database is smaller than min_db_over_budget times the largest
// budget or (RocksDB) a budget cannot hold the index blocks every Get
// needs; with Corruption on a false negative.
Status RunMemoryWorkload(const MemoryWorkloadOptions& options,
                         const KeySpace& keys, Engine* engine,
                         Progress* progress, MemoryReport* report);

// results.txt: the databases, a table per workload, a verdict per engine.
std::string FormatMemoryText(const MemoryReport& report);
// results.json: everything, the engine's counters included.
std::string FormatMemoryJson(const MemoryReport& report);
// Per workload i, memory-<i>.dat and a gnuplot script drawing memory-<i>.png
// (Gets per second against bits per key, a line per engine and family).
std::vector<std::pair<std::string, std::string>> FormatMemoryPlots(
    const MemoryReport& report, const std::string& terminal);

// "64MB", "1.5GiB", "4096": bytes (KB/MB/GB are 1000s, KiB/MiB/GiB 1024s).
Status ParseByteSize(const std::string& text, uint64_t* bytes);
// "uniform" or "zipf:<theta>" with 0 < theta < 1: *theta (0 for uniform).
Status ParseKeyDist(const std::string& text, double* theta);

}  // namespace compare
}  // namespace sstfilter

#endif  // SSTFILTER_TOOLS_COMPARE_MEMORY_WORKLOAD_H_
