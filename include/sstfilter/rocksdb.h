// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// sstfilter as the filter of RocksDB's block-based tables (RocksDB 7.0 to
// 11.x; tested against Debian 12's 7.8.3 and Debian 13's 9.10).
//
//   std::shared_ptr<const rocksdb::FilterPolicy> policy;
//   rocksdb::Status s =
//       sstfilter::NewRocksDBFilterPolicy("blocked_bloom:10", &policy);
//   if (!s.ok()) { /* s.ToString() names the problem */ }
//   rocksdb::BlockBasedTableOptions table_options;
//   table_options.filter_policy = policy;
//   options.table_factory.reset(
//       rocksdb::NewBlockBasedTableFactory(table_options));
//
// Ids. A policy's GetId() is "sstfilter." + its canonical spec
// ("sstfilter.bloom:10", "sstfilter.blocked_bloom:9.5",
// "sstfilter.cuckoo:12"; a seeded spec as "id=sstfilter.bloom:10:seed=7",
// since RocksDB reads a bare '=' as an option assignment). Once the ids are
// registered (RegisterRocksDBFilterPolicies, or loading the plugin
// libsstfilter_rocksdb_plugin.so), rocksdb::FilterPolicy::CreateFromString
// and OPTIONS files accept them, and GetId() round-trips through both.
//
// Compatibility. Every sstfilter policy stores its filters under one name,
// sstfilter::kFamilyName (RocksDB metaindex key "fullfilter.sstfilter.v1" or
// "partitionedfilter.sstfilter.v1"), and the bytes say which kind they are:
// any sstfilter policy reads files written by any other. RocksDB's built-in
// policies neither read these filters nor write ones we read: a DB reopened
// with a policy of the other family reads correctly, but without filters
// for the old files, until compaction rewrites them.
//
// WARNING: RocksDB drops filters silently (docs/ROCKSDB.md). With the
// default ConfigOptions::ignore_unsupported_options = true, an OPTIONS file
// naming "sstfilter.bloom:10" loaded by a program that has not registered
// the ids gives a table with NO filter, and `ldb compact` run without the
// plugin rewrites every file without one. Our factory answers a malformed
// id starting with "sstfilter" ("sstfilter_bloom:10" too) with
// InvalidArgument, which FilterPolicy::CreateFromString returns -- but
// RocksDB 7.8 itself ignores that error when it parses an OPTIONS file or
// an escaped option string: with the default ConfigOptions
// (input_strings_escaped = true), GetBlockBasedTableOptionsFromString
// returns OK and no filter, whatever ignore_unsupported_options says. Set
// input_strings_escaped = false to get the error.

#ifndef SSTFILTER_ROCKSDB_H_
#define SSTFILTER_ROCKSDB_H_

#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/listener.h>
#include <rocksdb/options.h>
#include <rocksdb/status.h>
#include <rocksdb/table_properties.h>
#include <rocksdb/utilities/object_registry.h>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "sstfilter/range.h"
#include "sstfilter/secret.h"
#include "sstfilter/spec.h"

namespace sstfilter {

// Every registered id starts with this prefix (sstfilter/spec.h).
inline constexpr auto& kRocksDBIdPrefix = kPolicyPrefix;

// Makes the filter policy for `spec` (sstfilter/spec.h grammar, with or
// without the "sstfilter." prefix: "bloom:10", "sstfilter.cuckoo:12"). On
// success *out holds the policy; on error (a malformed spec, or a keyed one
// without its secret, below) *out is unchanged and the Status, an
// InvalidArgument, quotes the spec and names the problem.
//
// The policy is immutable and thread-safe. Its builders take keys in any
// order, repeated or empty; its readers never allocate per query.
//
// A keyed spec ("blocked_bloom:10:keyed", sstfilter/secret.h) reads the
// application's secret from the file named by the environment variable
// SSTFILTER_SECRET_FILE (kSecretFileEnvVar), so that OPTIONS files, the
// plugin and the stock tools (db_bench, ldb, sst_dump) never hold it; a
// missing variable, or a file that cannot be read or is too short, is an
// InvalidArgument naming them, when the policy is made.
rocksdb::Status NewRocksDBFilterPolicy(
    const std::string& spec, std::shared_ptr<const rocksdb::FilterPolicy>* out);

// The same with the application's secret given directly (then the
// environment is not read). A keyed spec builds keyed filters with it; any
// spec reads keyed filters written with it, and answers "may match" for
// keyed filters of another secret. `secret` may be null.
rocksdb::Status NewRocksDBFilterPolicy(
    const std::string& spec, std::shared_ptr<const FilterSecret> secret,
    std::shared_ptr<const rocksdb::FilterPolicy>* out);

// The environment variable naming a keyed policy's secret file.
inline constexpr const char kSecretFileEnvVar[] = "SSTFILTER_SECRET_FILE";

// The id of the level listener (below) in OPTIONS files and option
// strings. A single line in [DBOptions] attaches it:
//
//   listeners={sstfilter.level_listener}
//
// It follows every column family of its database, and the by_level
// policies building that database's tables find it with no code.
inline constexpr const char kLevelListenerId[] = "sstfilter.level_listener";

// Adds to `library` one factory of rocksdb::FilterPolicy that matches every
// id starting with kRocksDBIdPrefix (a valid spec gives its policy, any
// other such id an InvalidArgument error naming the problem), one of
// rocksdb::EventListener for kLevelListenerId, and the factory of the range
// collector, kRocksDBRangeCollectorId (below). `arg` is ignored. Returns
// the number of factories added (3). The signature is
// RocksDB's RegistrarFunc, so it also serves ObjectLibrary::Register and
// ObjectRegistry::AddLibrary. Registering twice is harmless.
//
//   sstfilter::RegisterRocksDBFilterPolicies(
//       *rocksdb::ObjectLibrary::Default(), "");
int RegisterRocksDBFilterPolicies(rocksdb::ObjectLibrary& library,
                                  const std::string& arg);

// by_level with the tree's real shape (docs/LEVEL_SIZING.md), with no code:
// the listener of id kLevelListenerId in the OPTIONS file. A by_level
// policy whose database has none writes so, and how to add it, to the
// database's info LOG (once per column family); then it plans on a model
// tree. Two open databases, or column families, never mix their trees:
// only two databases given one info_log by the application cannot be told
// apart (they get the model tree, and the LOG says why).
//
// In code, for one policy: makes in *out
// a listener that, whenever a flush or compaction of `column_family`
// starts, tells `policy` how many keys each of that column family's runs
// holds, so each new table gets the bits of its run in the plan of the
// real tree instead of a model tree. Add it to the options of the one
// database whose column family `column_family` uses `policy`:
//
//   std::shared_ptr<rocksdb::EventListener> listener;
//   rocksdb::Status s = sstfilter::NewRocksDBLevelListener(policy, &listener);
//   options.listeners.push_back(listener);  // before DB::Open
//
// Either listener writes to a database's info LOG that it is attached, at
// the start of the database's first flush or compaction. A database that
// does not carry the listener made for `policy` (or carries one made for
// another column family) gets the model tree for its tables of `policy`,
// and its info LOG a warning saying so at its first flush.
//
// `policy` must come from this library (NewRocksDBFilterPolicy or an
// "sstfilter." id it registered); any other policy is an InvalidArgument
// error naming it, and *out is unchanged. A policy without by_level or
// auto ignores what it is told. The listener keeps `policy` alive.
rocksdb::Status NewRocksDBLevelListener(
    const std::shared_ptr<const rocksdb::FilterPolicy>& policy,
    std::shared_ptr<rocksdb::EventListener>* out,
    const std::string& column_family = rocksdb::kDefaultColumnFamilyName);

// ---- Range filters: scans skip tables (sstfilter/range.h) ----------------
//
// A table properties collector stores a range filter of every key a table
// holds in the table's user-collected properties; a RocksDBRangeScan's
// ReadOptions::table_filter then skips, for one iterator over
// [lower, upper), every table whose filter says it holds no key there.
// Only iterators are affected; point filters work as before, beside it.
//
//   std::shared_ptr<rocksdb::TablePropertiesCollectorFactory> collector;
//   s = sstfilter::NewRocksDBRangeCollectorFactory("range:14", &collector);
//   options.table_properties_collector_factories.push_back(collector);
//   ...
//   sstfilter::RocksDBRangeScan scan("user0042", "user0043");
//   rocksdb::ReadOptions ro;
//   scan.Apply(&ro);  // bounds and table_filter; scan outlives the iterator
//   std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ro));
//   for (it->Seek("user0042"); it->Valid(); it->Next()) { ... }

// The collector's id (OPTIONS files: table_properties_collectors=
// {id=sstfilter.range_collector;spec=range:14:len=8}; without spec= the
// default RangeFilterSpec) and the property that holds the filter.
inline constexpr const char kRocksDBRangeCollectorId[] =
    "sstfilter.range_collector";
inline constexpr auto& kRocksDBRangeProperty = kRangePropertyName;

// Makes the collector factory for a range spec ("range:14:len=8"). On error
// *out is unchanged and the InvalidArgument names the problem. Tables with
// range tombstones get no filter (they are never skipped). The collector
// keeps 8 bytes per key of the table being written until it is finished.
rocksdb::Status NewRocksDBRangeCollectorFactory(
    const std::string& spec,
    std::shared_ptr<rocksdb::TablePropertiesCollectorFactory>* out);

// One scan's bounds [lower, upper) (no upper bound: std::nullopt) and its
// table filter. Apply sets a ReadOptions' iterate_lower_bound,
// iterate_upper_bound and table_filter, which then point into this
// object: it must outlive every iterator made with them, and the iterator
// then returns exactly the keys a scan without the filter returns.
// A table is read unless its filter exists, it has no range tombstones,
// and its filter says no key of [lower, upper) (MayContainKeys). Thread-
// safe; not copyable.
class RocksDBRangeScan {
 public:
  explicit RocksDBRangeScan(std::string lower,
                            std::optional<std::string> upper = std::nullopt);
  RocksDBRangeScan(const RocksDBRangeScan&) = delete;
  RocksDBRangeScan& operator=(const RocksDBRangeScan&) = delete;

  void Apply(rocksdb::ReadOptions* options) const;
  // The table filter: false if the table certainly holds no key in range.
  bool MayContain(const rocksdb::TableProperties& props) const;

  // Tables the filter was asked about, and those it skipped, so far.
  uint64_t tables_checked() const { return tables_checked_.load(); }
  uint64_t tables_skipped() const { return tables_skipped_.load(); }

 private:
  const std::string lower_;
  const std::optional<std::string> upper_;
  const rocksdb::Slice lower_slice_;
  const rocksdb::Slice upper_slice_;
  const std::function<bool(const rocksdb::TableProperties&)> filter_;
  mutable std::atomic<uint64_t> tables_checked_{0};
  mutable std::atomic<uint64_t> tables_skipped_{0};
};

}  // namespace sstfilter

#endif  // SSTFILTER_ROCKSDB_H_
