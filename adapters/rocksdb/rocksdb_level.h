// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// PRIVATE, never installed. by_level in RocksDB: the bits per key of each
// new table's filter (docs/LEVEL_SIZING.md, "The rule in RocksDB", is the
// contract), planned on the tree the level listener reports
// (rocksdb_listener.cc) or, without one, on a model tree.

#ifndef SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_LEVEL_H_
#define SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_LEVEL_H_

#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/utilities/object_registry.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
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
// >= 1 one run (under level and universal compaction alike).
struct TreeRuns {
  std::vector<RunKeys> l0_files;
  std::vector<RunKeys> levels;  // levels[L]: level L (levels[0] unused)
  // The index in l0_files of the output of the last compaction started
  // that writes L0 and still runs; -1 if none.
  int l0_output = -1;
  // The deepest level >= 1 a running manual compaction (CompactRange)
  // writes; 0 if none.
  int manual_level = 0;
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
  // plan is kept while the tree's runs stay within 1/32 of its own. Under
  // universal compaction a compaction's table at L0 gets the bits of the
  // run tree.l0_output, and the bottom run (level >= 1) those of a tree in
  // which newer runs hold half its keys, the middle of its life (unless a
  // manual compaction writes it: then the tree's own).
  void Observe(const TreeRuns& tree, uint64_t new_l0_keys, uint64_t flush_keys);

  // Whether the spec is planned on the tree (by_level or auto): else
  // Observe does nothing.
  bool Plans() const;

  // Whether a table of `context` is sized on the tree (by_level or auto,
  // level or universal compaction, a level >= 0): only then does a
  // listener matter. Without a listener's plan for its run a table gets
  // the bits of its level in the model tree of its compaction style
  // (docs/LEVEL_SIZING.md); under universal compaction a compaction's
  // table at L0 gets the bits of one L0 file, as a flush (which run it
  // makes, only the listener knows).
  bool UsesTree(const rocksdb::FilterBuildingContext& context) const;

  // Set once a listener made in code (NewRocksDBLevelListener) reports to
  // this sizer: it then wins over any listener of an OPTIONS file.
  void MarkBound() { bound_ = true; }
  bool bound() const { return bound_; }

  // The listener made in code, at the start of each job of column family
  // `cf` of the database logging to `info_log` (whose tree it reports).
  void NoteFollowed(const std::shared_ptr<rocksdb::Logger>& info_log,
                    const std::string& cf);
  // Whether a listener made in code has reported a job of column family
  // `cf` of the open database logging to `info_log`: if not, that
  // database does not carry it (or has run no flush or compaction since
  // it opened).
  bool Follows(const rocksdb::Logger* info_log, const std::string& cf);

 private:
  // The plan of runs of `keys` (l0[i]: run i is an L0 file) at `average`
  // bits per key: each run's spec (by_level: PlanLevelBits; auto:
  // PlanFilterCosts), and the budget in bits. Empty on error.
  std::vector<FilterSpec> PlanSpecs(const std::vector<uint64_t>& keys,
                                    const std::vector<bool>& l0, double average,
                                    double* budget_bits) const;
  const FilterSpec* ObservedSpec(int level) const;
  // The model tree (no listener's plan) of one compaction style: the
  // shallowest and deepest levels >= 1 built for, and its plans, cached per
  // (top, bottom).
  struct ModelTree {
    explicit ModelTree(bool u) : universal(u) {}
    const bool universal;
    int top = std::numeric_limits<int>::max();
    int bottom = 0;
    std::map<std::pair<int, int>, std::vector<FilterSpec>> plans;
  };
  FilterSpec ModelSpec(const rocksdb::FilterBuildingContext& context,
                       ModelTree* model);
  const std::vector<FilterSpec>& ModelPlan(ModelTree* model);
  // One run of a plan: its level (0: the new L0 file; -1: an L0 file no
  // new table goes to; kL0Output: the L0 file TreeRuns::l0_output) and keys.
  static constexpr int kL0Output = -2;
  struct Run {
    int level;
    RunKeys keys;
  };
  std::vector<Run> PlanRuns(const TreeRuns& tree, uint64_t new_l0_keys,
                            uint64_t flush_keys) const;
  // Under universal compaction: the spec of the bottom run in `specs`
  // (the plan of `runs` at `average`) planned for the middle of its life,
  // unless a manual compaction writes it (at or above `manual_level`).
  void AnticipateBottom(const std::vector<Run>& runs, int manual_level,
                        uint64_t flush_keys, double average,
                        std::vector<FilterSpec>* specs) const;
  static bool NearlySame(const std::vector<Run>& a, const std::vector<Run>& b);
  double Overspent(const std::vector<Run>& runs,
                   const std::vector<FilterSpec>& specs, double budget_bits);
  // The bytes of a filter of `spec` for each of `built`'s key counts
  // (ParamsForSpec's; 0 if it fails), remembered: the tree's files come
  // back at every job, most under the same spec.
  std::vector<uint64_t> PlannedBytes(const FilterSpec& spec,
                                     const std::vector<BuiltFilter>& built);

  const FilterSpec spec_;
  std::mutex mu_;
  // PlannedBytes' answers: for the last kMaxPlannedSpecs specs, oldest
  // first, bytes by keys (at most kMaxPlannedCounts, then they start over).
  static constexpr size_t kMaxPlannedSpecs = 16;
  static constexpr size_t kMaxPlannedCounts = 4096;
  std::mutex planned_mu_;
  std::vector<std::pair<FilterSpec, std::map<uint64_t, uint64_t>>> planned_;
  ModelTree level_model_{false};
  ModelTree universal_model_{true};
  // The observed tree's plan: the runs it was made for, its TreeRuns::
  // manual_level, and per level the spec of a new table there
  // (bits_per_key 0: none planned).
  std::vector<Run> observed_runs_;
  int observed_manual_level_ = 0;
  std::vector<FilterSpec> observed_specs_;
  // The spec of the run TreeRuns::l0_output, if it has one.
  bool has_l0_output_ = false;
  FilterSpec observed_l0_output_;
  std::atomic<bool> bound_{false};
  // Whether the last table sized on the tree was under universal
  // compaction.
  std::atomic<bool> universal_{false};
  // NoteFollowed's column families; entries of closed databases (whose
  // info log is gone) are dropped.
  struct Followed {
    std::weak_ptr<rocksdb::Logger> info_log;
    const rocksdb::Logger* log;  // its address, to compare
    std::string cf;
  };
  std::mutex followed_mu_;
  std::vector<Followed> followed_;
};

// Where the level listener of an OPTIONS file (id "sstfilter.level_listener")
// and the by_level policies of the same file meet: each load makes new
// objects, so neither holds the other. One channel per column family of
// one open database, found by what both sides know:
//
//   the database's info log, the rocksdb::Logger of DBOptions::info_log
//     (the listener: DB::GetDBOptions(); a table's builder:
//     FilterBuildingContext::info_log, in every release from 7.0 to 11.x),
//     RocksDB making one per database unless the application shares one;
//   the column family's name (FlushJobInfo::cf_name and the others;
//     FilterBuildingContext::column_family_name).
//
// So two databases, or two column families, never share a channel. Two
// databases given the same info log by the application are told apart by
// their names (paths): their policies then find two channels for one log,
// and use the model tree (FindTreeChannel says kShared).
// Thread-safe.
class TreeChannel {
 public:
  // Tells every sizer of the channel (LevelSizer::Observe's arguments),
  // and keeps the tree for the sizers made later.
  void Observe(const TreeRuns& tree, uint64_t new_l0_keys, uint64_t flush_keys);

  // The sizer of `spec` for this column family: made on first use, and
  // then told the last tree posted. Lives as long as the channel.
  LevelSizer* SizerFor(const FilterSpec& spec);

 private:
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<LevelSizer>> sizers_;  // by spec
  bool posted_ = false;
  TreeRuns last_tree_;
  uint64_t last_new_l0_keys_ = 0;
  uint64_t last_flush_keys_ = 0;
};

// The listener's side: the channel of `db`'s column family `cf`, made if
// needed. Channels of closed databases (whose info log is gone) are
// dropped here.
std::shared_ptr<TreeChannel> ListenedTreeChannel(rocksdb::DB* db,
                                                 const std::string& cf);

// The policy's side: the channel of the database logging to `info_log`
// and its column family `cf`.
enum class ChannelLookup { kFound, kNone, kShared };
ChannelLookup FindTreeChannel(const rocksdb::Logger* info_log,
                              const std::string& cf,
                              std::shared_ptr<TreeChannel>* out);

// The sizer of an sstfilter policy made by this library; nullptr for any
// other policy.
LevelSizer* LevelSizerOf(const rocksdb::FilterPolicy* policy);

// Adds the factory of the listener of id kLevelListenerId
// (rocksdb_listener.cc) to `library`. Returns 1.
int RegisterLevelListener(rocksdb::ObjectLibrary& library);

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_LEVEL_H_
