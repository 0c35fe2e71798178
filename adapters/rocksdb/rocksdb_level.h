// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// PRIVATE, never installed. by_level in RocksDB: the bits per key of each
// new table's filter (docs/LEVEL_SIZING.md, "The rule in RocksDB", is the
// contract), planned on the tree the level listener reports
// (rocksdb_listener.cc) or, without one, on a model tree.

#ifndef SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_LEVEL_H_
#define SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_LEVEL_H_

#include <rocksdb/filter_policy.h>

#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "sstfilter/params.h"
#include "sstfilter/spec.h"

namespace sstfilter {
namespace internal {

// A filter already built: its entries and bits.
struct BuiltFilter {
  uint64_t keys;
  double bits;
};

// One sorted run: its keys, and the filters of its files that stay (no
// running job reads them) and are known.
struct RunKeys {
  uint64_t keys = 0;
  std::vector<BuiltFilter> built;
};

// A column family's sorted runs: each L0 file is a run, and each level
// >= 1 one run.
struct TreeRuns {
  std::vector<RunKeys> l0_files;
  std::vector<RunKeys> levels;  // levels[L]: level L (levels[0] unused)
};

// Thread-safe: RocksDB builds tables in several threads, and the listener
// reports from others.
class LevelSizer {
 public:
  explicit LevelSizer(const FilterSpec& spec) : spec_(spec) {}

  // The spec of a new table's filter.
  FilterSpec SpecFor(const rocksdb::FilterBuildingContext& context);

  // The tree as it will be when a flush or compaction that starts now
  // ends, `new_l0_keys`, the keys of the L0 file it writes (0: none; not
  // in `tree`), and `flush_keys`, those of a flush (0: unknown). From now
  // on a table at level L gets the bits of L's run in the plan of that
  // tree, and an L0 table those of the new L0 file. The plan counts at
  // least (l0_files + 1) / 2 L0 files, adding ones of flush_keys: L0's
  // mean between two compactions. Its average is the spec's minus what the
  // built filters spend over their runs' plan, per key of the tree. The
  // plan is kept while the tree's runs stay within 1/32 of its own.
  void Observe(const TreeRuns& tree, uint64_t new_l0_keys, uint64_t flush_keys);

 private:
  double ObservedBits(int level) const;
  double ModelBits(const rocksdb::FilterBuildingContext& context);
  const std::vector<double>& ModelPlan(int top, int bottom);
  // One run of a plan: its level (0: the new L0 file; -1: an L0 file no
  // new table goes to) and keys.
  struct Run {
    int level;
    RunKeys keys;
  };
  std::vector<Run> PlanRuns(const TreeRuns& tree, uint64_t new_l0_keys,
                            uint64_t flush_keys) const;
  static bool NearlySame(const std::vector<Run>& a, const std::vector<Run>& b);
  double Overspent(const std::vector<Run>& runs, const LevelPlan& plan) const;

  const FilterSpec spec_;
  std::mutex mu_;
  // The model (no listener): the shallowest and deepest levels >= 1 built
  // for, and its plans, cached per (top, bottom).
  int top_ = std::numeric_limits<int>::max();
  int bottom_ = 0;
  std::map<std::pair<int, int>, std::vector<double>> model_plans_;
  // The observed tree's plan: the runs it was made for, and per level the
  // bits of a new table there (0: none planned).
  std::vector<Run> observed_runs_;
  std::vector<double> observed_bits_;
};

// The sizer of an sstfilter policy made by this library; nullptr for any
// other policy.
LevelSizer* LevelSizerOf(const rocksdb::FilterPolicy* policy);

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_LEVEL_H_
