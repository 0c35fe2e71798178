// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// RocksDB (7.x) as the comparison drives it.
//
// Counting. Table-file reads are counted by the harness's FileSystemWrapper
// (harness/rocksdb_counting.h), whose random-access files call CountRead
// for every Read and every request of a MultiRead. Tables are opened at
// DB::Open (max_open_files = -1) with cache_index_and_filter_blocks = false, so
// each table reader holds its index and filter in memory from then on, and
// there is no block cache (no_block_cache): every block a lookup needs is one
// counted read, and every such read is a data block. RocksDB's perf context
// (block_read_count, index/filter_block_read_count, bloom_sst_hit/miss_count)
// and statistics tickers (BLOOM_FILTER_USEFUL, BLOOM_FILTER_FULL_POSITIVE) are
// kept beside for cross-checks.
//
// Filters. sstfilter policies get their level listener
// (NewRocksDBLevelListener: by_level plans from the real tree). Every
// policy -- built-in or sstfilter -- is wrapped in the harness's
// InstrumentedPolicy, which delegates everything and adds two
// measurements: the time spent in its builders' Finish (where filters are
// built; AddKey only hashes), split by the reason (flush, compaction) and
// level that RocksDB's FilterBuildingContext gives each builder, and every
// answer of its readers (CountProbes). Built-in and sstfilter policies are
// timed by the same wrapper, so their build times compare.
//
// Tree shape, fixed (the default). Automatic compactions are off and the
// tree is built the same way for every policy: keys are written in
// generations, largest first; each generation is flushed and moved by
// CompactFiles to its level (L<levels> .. L1, sizes in ratio 10:1 like a
// leveled LSM), and the last keys become <l0_files> L0 files. Every policy
// thus gets the same files and levels.
//
// Tree shape, natural. RocksDB shapes the tree itself: the keys are Put in
// the key space's (random) order with automatic compactions and
// level_compaction_dynamic_level_bytes, sized by NaturalTree. The load is
// paced so that the tree does not depend on thread timing: keys arrive in
// chunks of 3/4 of a memtable, each flushed, and the next chunk waits until
// no flush or compaction runs or is pending (RocksDB 7.8 has no
// WaitForCompact: its properties are polled). RocksDB still chooses every
// compaction. The database is reopened for the lookups with automatic
// compactions off, so the tree stays as it settled. Filters count in file
// sizes, so policies of different sizes may get slightly different trees;
// each run reports its own.

#include <fcntl.h>
#if __has_include(<rocksdb/advanced_cache.h>)
#include <rocksdb/advanced_cache.h>  // RocksDB 8+: Cache's definition
#endif
#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/metadata.h>
#include <rocksdb/options.h>
#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/table_properties.h>
#include <rocksdb/utilities/object_registry.h>
#include <rocksdb/version.h>
#include <rocksdb/write_batch.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "adapters/rocksdb/rocksdb_abi.h"
#include "adapters/rocksdb/rocksdb_compat.h"
#include "harness/rocksdb_counting.h"
#include "harness/rocksdb_range_scan.h"
#include "sstfilter/rocksdb.h"
#include "tools/sstfilter_compare/engine.h"

namespace sstfilter {
namespace compare {
namespace {

// The engine's policy object for `p`, or null for "none".
Status MakePolicy(const Policy& p,
                  std::shared_ptr<const rocksdb::FilterPolicy>* out) {
  out->reset();
  switch (p.family) {
    case Family::kNone:
      return Status::OK();
    case Family::kRocksDBBloom:
      out->reset(rocksdb::NewBloomFilterPolicy(p.bits_per_key));
      return Status::OK();
    case Family::kRocksDBRibbon:
      // Default bloom_before_level (0): Bloom for flushes, Ribbon for every
      // compaction output, as RocksDB recommends.
      out->reset(rocksdb::NewRibbonFilterPolicy(p.bits_per_key));
      return Status::OK();
    case Family::kRocksDBRibbonAll:
      // bloom_before_level = -1: Ribbon for flushes too.
      out->reset(rocksdb::NewRibbonFilterPolicy(p.bits_per_key, -1));
      return Status::OK();
    case Family::kSstfilter: {
      rocksdb::Status s =
          NewRocksDBFilterPolicy(p.spec.ToString(), RunSecret(), out);
      return s.ok() ? Status::OK() : Status::InvalidArgument(s.ToString());
    }
    case Family::kLevelDBBloom:
      break;
  }
  return Status::NotSupported("policy " + p.ToString() +
                              " does not run on RocksDB");
}

// The level listener, timed: every event it takes goes to `inner` (keep
// the list in step with adapters/rocksdb/rocksdb_listener.cc), and the
// time spent in it is added to *nanos.
class TimedListener final : public rocksdb::EventListener {
 public:
  TimedListener(std::shared_ptr<rocksdb::EventListener> inner,
                std::atomic<uint64_t>* nanos)
      : inner_(std::move(inner)), nanos_(nanos) {}

  const char* Name() const override { return inner_->Name(); }
  void OnFlushBegin(rocksdb::DB* db,
                    const rocksdb::FlushJobInfo& info) override {
    Timed([&] { inner_->OnFlushBegin(db, info); });
  }
  void OnFlushCompleted(rocksdb::DB* db,
                        const rocksdb::FlushJobInfo& info) override {
    Timed([&] { inner_->OnFlushCompleted(db, info); });
  }
  void OnTableFileCreated(const rocksdb::TableFileCreationInfo& info) override {
    Timed([&] { inner_->OnTableFileCreated(info); });
  }
  void OnTableFileDeleted(const rocksdb::TableFileDeletionInfo& info) override {
    Timed([&] { inner_->OnTableFileDeleted(info); });
  }
  void OnCompactionBegin(rocksdb::DB* db,
                         const rocksdb::CompactionJobInfo& info) override {
    Timed([&] { inner_->OnCompactionBegin(db, info); });
  }
  void OnCompactionCompleted(rocksdb::DB* db,
                             const rocksdb::CompactionJobInfo& info) override {
    Timed([&] { inner_->OnCompactionCompleted(db, info); });
  }

 private:
  template <typename F>
  void Timed(F f) {
    const Clock::time_point start = Clock::now();
    f();
    nanos_->fetch_add(NanosSince(start), std::memory_order_relaxed);
  }

  const std::shared_ptr<rocksdb::EventListener> inner_;
  std::atomic<uint64_t>* const nanos_;
};

// A builder of `policy` for a table that compaction of `style` (leveled
// unless said) writes at `level` of `num_levels` (-1: not known) for
// `reason`, as RocksDB asks for one; with `info_log`, for the default
// column family of the database logging there (by_level and auto then
// plan it on the tree their listener reported for that database). The
// builder keeps nothing of the context.
std::unique_ptr<rocksdb::FilterBitsBuilder> NewLeveledBuilder(
    const std::shared_ptr<const rocksdb::FilterPolicy>& policy, int num_levels,
    int level, rocksdb::TableFileCreationReason reason,
    rocksdb::CompactionStyle style = rocksdb::kCompactionStyleLevel,
    rocksdb::Logger* info_log = nullptr) {
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy = policy;
  rocksdb::FilterBuildingContext context(table);
  context.compaction_style = style;
  context.num_levels = num_levels;
  context.level_at_creation = level;
  context.reason = reason;
  if (info_log != nullptr) {
    context.info_log = info_log;
    context.column_family_name = rocksdb::kDefaultColumnFamilyName;
  }
  return std::unique_ptr<rocksdb::FilterBitsBuilder>(
      policy->GetBuilderWithContext(context));
}

Status Err(const char* what, const rocksdb::Status& s) {
  return EngineError(std::string("rocksdb ") + what, s.ToString());
}

// --- the engine
// -----------------------------------------------------------------

class RocksDBEngine final : public Engine {
 public:
  RocksDBEngine(bool direct_io, const RocksDBTree& tree)
      : direct_io_(direct_io),
        tree_(tree),
        fs_(std::make_shared<harness::CountingFileSystem>(
            rocksdb::FileSystem::Default())),
        env_(rocksdb::NewCompositeEnv(fs_)) {}

  // A destructor has no one to report a failed close to.
  ~RocksDBEngine() override { (void)Close(); }

  const char* name() const override { return "rocksdb"; }
  std::string version() const override {
    return rocksdb::GetRocksVersionAsString(true);
  }
  std::string io_mode() const override {
    return direct_io_ ? "direct I/O (use_direct_reads), no block cache"
                      : "page cache (O_DIRECT not available), no block cache";
  }
  bool has_multiget() const override { return true; }

  Status Build(const Policy& policy, const KeySpace& keys,
               const std::string& dir, const ProgressFn& progress,
               BuildResult* out) override;

  Status BuiltinFilterBytes(const Policy& p, int level, uint64_t n,
                            uint64_t* bytes) override;

  Status TimeFilterBuild(const Policy& p, const BuildSlice& slice,
                         uint64_t keys_per_filter, uint64_t filters,
                         double* ns_per_key, double* bits_per_key) override;

  void ThreadBegin() override {
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
    rocksdb::get_perf_context()->Reset();
  }
  void ThreadEnd(EngineCounters* c) override {
    const rocksdb::PerfContext* p = rocksdb::get_perf_context();
    (*c)["perf.block_cache_hit_count"] += p->block_cache_hit_count;
    (*c)["perf.block_cache_index_hit_count"] += p->block_cache_index_hit_count;
    (*c)["perf.block_cache_filter_hit_count"] +=
        p->block_cache_filter_hit_count;
    (*c)["perf.block_read_count"] += p->block_read_count;
    (*c)["perf.block_read_byte"] += p->block_read_byte;
    (*c)["perf.index_block_read_count"] += p->index_block_read_count;
    (*c)["perf.filter_block_read_count"] += p->filter_block_read_count;
    (*c)["perf.bloom_sst_hit_count"] += p->bloom_sst_hit_count;
    (*c)["perf.bloom_sst_miss_count"] += p->bloom_sst_miss_count;
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
  }
  void PhaseBegin() override { TakeTickers(&tickers_before_); }
  void PhaseEnd(EngineCounters* c) override {
    EngineCounters now;
    TakeTickers(&now);
    for (const auto& [name, value] : now) {
      (*c)[name] += value - tickers_before_[name];
    }
  }

  Status Get(const std::string& key, std::string* value, bool* found) override {
    rocksdb::Status s = db_->Get(read_options_, key, value);
    *found = s.ok();
    if (s.ok() || s.IsNotFound()) return Status::OK();
    return Err("Get", s);
  }

  Status MultiGet(const std::vector<std::string>& keys,
                  std::vector<std::string>* values,
                  std::vector<bool>* found) override {
    const size_t n = keys.size();
    std::vector<rocksdb::Slice> slices(keys.begin(), keys.end());
    std::vector<rocksdb::PinnableSlice> pinned(n);
    std::vector<rocksdb::Status> statuses(n);
    db_->MultiGet(read_options_, db_->DefaultColumnFamily(), n, slices.data(),
                  pinned.data(), statuses.data(), /*sorted_input=*/false);
    values->resize(n);
    found->assign(n, false);
    for (size_t i = 0; i < n; i++) {
      if (statuses[i].ok()) {
        (*found)[i] = true;
        (*values)[i].assign(pinned[i].data(), pinned[i].size());
      } else if (!statuses[i].IsNotFound()) {
        return Err("MultiGet", statuses[i]);
      }
    }
    return Status::OK();
  }

  Status ReopenWithBlockCache(uint64_t bytes) override;
  void MemoryInUse(uint64_t* cache, uint64_t* outside) override {
    *cache = block_cache_ ? block_cache_->GetUsage() : 0;
    *outside = 0;
    if (db_ != nullptr) {
      (void)db_->GetIntProperty(
          rocksdb::DB::Properties::kEstimateTableReadersMem, outside);
    }
  }

  Status Close() override {
    if (db_ == nullptr) return Status::OK();
    rocksdb::Status s = db_->Close();
    db_.reset();
    return s.ok() ? Status::OK() : Err("Close", s);
  }

 private:
  // With block_cache null: no block cache, index and filters held by the
  // table readers (Build); else everything in block_cache.
  rocksdb::Options MakeOptions(
      const std::shared_ptr<const rocksdb::FilterPolicy>& policy,
      const std::shared_ptr<rocksdb::Cache>& block_cache) {
    rocksdb::Options o;
    o.env = env_.get();
    o.create_if_missing = true;
    o.error_if_exists = true;
    o.compression = rocksdb::kNoCompression;
    o.bottommost_compression = rocksdb::kDisableCompressionOption;
    o.disable_auto_compactions = true;
    o.num_levels = tree_.levels + 1;
    if (tree_.natural) {
      o.disable_auto_compactions = false;
      o.num_levels = rocksdb::Options().num_levels;  // RocksDB's 7
      o.level_compaction_dynamic_level_bytes = true;
      o.write_buffer_size = tree_.write_buffer_size;
      o.max_bytes_for_level_base = tree_.max_bytes_for_level_base;
      o.target_file_size_base = tree_.target_file_size_base;
      if (tree_.universal) {
        o.compaction_style = rocksdb::kCompactionStyleUniversal;
        o.level_compaction_dynamic_level_bytes = false;
      }
    }
    o.max_open_files = -1;  // open every table, index and filter at Open
    o.use_direct_reads = direct_io_;
    o.statistics = statistics_;
    o.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
    rocksdb::BlockBasedTableOptions t;
    t.no_block_cache = block_cache == nullptr;
    t.block_cache = block_cache;
    t.cache_index_and_filter_blocks = block_cache != nullptr;
    t.pin_l0_filter_and_index_blocks_in_cache = block_cache != nullptr;
    if (tree_.partitioned) {
      t.index_type = rocksdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
      t.partition_filters = true;
      t.metadata_block_size = 4096;
    }
    t.block_size = 4096;
    t.whole_key_filtering = true;
    t.filter_policy = policy;
    o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
    return o;
  }

  void TakeTickers(EngineCounters* c) {
    if (!statistics_) return;
    (*c)["ticker.BLOOM_FILTER_USEFUL"] =
        statistics_->getTickerCount(rocksdb::BLOOM_FILTER_USEFUL);
    (*c)["ticker.BLOOM_FILTER_FULL_POSITIVE"] =
        statistics_->getTickerCount(rocksdb::BLOOM_FILTER_FULL_POSITIVE);
    (*c)["ticker.BLOOM_FILTER_FULL_TRUE_POSITIVE"] =
        statistics_->getTickerCount(rocksdb::BLOOM_FILTER_FULL_TRUE_POSITIVE);
    if (!block_cache_) return;
    for (const auto& [ticker, name] :
         {std::pair{rocksdb::BLOCK_CACHE_DATA_HIT, "BLOCK_CACHE_DATA_HIT"},
          {rocksdb::BLOCK_CACHE_DATA_MISS, "BLOCK_CACHE_DATA_MISS"},
          {rocksdb::BLOCK_CACHE_INDEX_HIT, "BLOCK_CACHE_INDEX_HIT"},
          {rocksdb::BLOCK_CACHE_INDEX_MISS, "BLOCK_CACHE_INDEX_MISS"},
          {rocksdb::BLOCK_CACHE_FILTER_HIT, "BLOCK_CACHE_FILTER_HIT"},
          {rocksdb::BLOCK_CACHE_FILTER_MISS, "BLOCK_CACHE_FILTER_MISS"}}) {
      (*c)[std::string("ticker.") + name] = statistics_->getTickerCount(ticker);
    }
  }

  // Writes the key space in generations into the open database: see the
  // top of this file.
  Status Load(const KeySpace& keys, const rocksdb::Options& options,
              const ProgressFn& progress);
  // Natural tree: chunks of keys_per_flush keys, each flushed and settled.
  Status LoadNatural(const KeySpace& keys, const ProgressFn& progress);
  // Waits until RocksDB has no flush or compaction running or pending.
  Status WaitForCompactions();
  Status WriteAndFlush(const KeySpace& keys, uint64_t begin, uint64_t end,
                       const ProgressFn& progress);
  // Compacts every L0 file into `level`.
  Status MoveL0To(int level, const rocksdb::Options& options);
  Status Measure(BuildResult* out);

  const bool direct_io_;
  const RocksDBTree tree_;
  const std::shared_ptr<rocksdb::FileSystem> fs_;
  const std::unique_ptr<rocksdb::Env> env_;
  std::shared_ptr<rocksdb::Statistics> statistics_;
  std::unique_ptr<harness::PolicyCalls> calls_;
  std::unique_ptr<rocksdb::DB> db_;
  rocksdb::Options options_;  // the last database's, as Build opened it
  std::string dir_;
  std::shared_ptr<rocksdb::Cache> block_cache_;  // ReopenWithBlockCache's
  rocksdb::ReadOptions read_options_;
  EngineCounters tickers_before_;
  std::atomic<uint64_t> listener_nanos_{0};  // TimedListener's
  // The last load's policy (unwrapped), its spec, and the info log of its
  // database as loaded, kept alive so that TimeFilterBuild's builders get
  // the plan by_level and auto ended the load with.
  std::shared_ptr<const rocksdb::FilterPolicy> loaded_policy_;
  std::string loaded_spec_;
  std::shared_ptr<rocksdb::Logger> loaded_info_log_;
};

Status RocksDBEngine::Build(const Policy& policy, const KeySpace& keys,
                            const std::string& dir, const ProgressFn& progress,
                            BuildResult* out) {
  Status err = Close();  // a database left open by a failed run
  if (!err.ok()) return err;
  *out = BuildResult();
  loaded_policy_.reset();
  loaded_info_log_.reset();
  std::shared_ptr<const rocksdb::FilterPolicy> inner;
  err = MakePolicy(policy, &inner);
  if (!err.ok()) return err;
  const bool from_options =
      tree_.from_options && policy.family == Family::kSstfilter;
  rocksdb::ConfigOptions config;
  if (from_options) {
    // The policy anew from its id, as an OPTIONS file names it.
    config.registry = rocksdb::ObjectRegistry::NewInstance();
    config.registry->AddLibrary("sstfilter", RegisterRocksDBFilterPolicies, "");
    config.ignore_unsupported_options = false;
    const std::string id = inner->GetId();
    inner.reset();
    rocksdb::Status s =
        rocksdb::FilterPolicy::CreateFromString(config, id, &inner);
    if (!s.ok()) return Err("FilterPolicy::CreateFromString", s);
  }
  calls_ = std::make_unique<harness::PolicyCalls>();
  std::shared_ptr<const rocksdb::FilterPolicy> instrumented;
  if (inner) {
    instrumented =
        std::make_shared<harness::InstrumentedPolicy>(inner, calls_.get());
  }
  statistics_ = rocksdb::CreateDBStatistics();
  block_cache_.reset();
  rocksdb::Options options = MakeOptions(instrumented, nullptr);
  bool timed_listener = false;
  if (from_options) {
    // The listener from the line of docs/ROCKSDB.md: by_level finds it
    // through the database's info log, with no code.
    rocksdb::DBOptions db_options;
    rocksdb::Status s = rocksdb::GetDBOptionsFromString(
        config, options, std::string("listeners=") + kLevelListenerId,
        &db_options);
    if (!s.ok()) return Err("GetDBOptionsFromString", s);
    options = rocksdb::Options(db_options, options);
  } else if (policy.family == Family::kSstfilter && !tree_.no_listener) {
    // by_level learns the tree's real runs from the listener (the policy
    // itself, not its instrumented wrapper); others ignore it.
    std::shared_ptr<rocksdb::EventListener> listener;
    rocksdb::Status ls = NewRocksDBLevelListener(inner, &listener);
    if (!ls.ok()) return Err("NewRocksDBLevelListener", ls);
    listener_nanos_ = 0;
    timed_listener = true;
    options.listeners.push_back(
        std::make_shared<TimedListener>(listener, &listener_nanos_));
  }

  const Clock::time_point start = Clock::now();
  const auto open = [&](auto* out_db) {
    return rocksdb::DB::Open(options, dir, out_db);
  };
  rocksdb::Status s = OpenInto(&db_, open);
  if (!s.ok()) return Err("Open", s);
  err = tree_.natural ? LoadNatural(keys, progress)
                      : Load(keys, options, progress);
  if (!err.ok()) return err;
  out->load_seconds = SecondsSince(start);
  out->filter_build_seconds = calls_->build_seconds();
  out->filters_built = calls_->finishes.load();
  if (timed_listener) {
    out->listener_seconds = static_cast<double>(listener_nanos_.load()) * 1e-9;
  }
  for (int reason = 0; reason < harness::PolicyCalls::kNumReasons; reason++) {
    for (int level = 0; level <= harness::PolicyCalls::kMaxLevel + 1; level++) {
      const harness::PolicyCalls::Slot& slot = calls_->slots[reason][level];
      if (slot.filters.load() == 0) continue;
      BuildSlice b;
      b.reason = reason == harness::PolicyCalls::kFlush        ? "flush"
                 : reason == harness::PolicyCalls::kCompaction ? "compaction"
                                                               : "other";
      b.level = level <= harness::PolicyCalls::kMaxLevel ? level : -1;
      b.nanos = slot.nanos.load();
      b.keys = slot.keys.load();
      b.filters = slot.filters.load();
      out->build_split.push_back(b);
    }
  }

  err = Measure(out);
  if (!err.ok()) return err;

  loaded_policy_ = inner;
  loaded_spec_ = policy.ToString();
  loaded_info_log_ = db_->GetDBOptions().info_log;
  // Reopen: every table reader is opened afresh with its index and filter.
  err = Close();
  if (!err.ok()) return err;
  options.error_if_exists = false;
  options.create_if_missing = false;
  options.disable_auto_compactions = true;  // the tree stays as measured
  s = OpenInto(&db_, open);
  if (!s.ok()) return Err("reopen", s);
  options_ = options;
  dir_ = dir;
  uint64_t mem = 0;
  if (db_->GetIntProperty(rocksdb::DB::Properties::kEstimateTableReadersMem,
                          &mem)) {
    out->table_reader_memory = mem;
  }
  return Status::OK();
}

Status RocksDBEngine::ReopenWithBlockCache(uint64_t bytes) {
  if (db_ == nullptr) return Status::InvalidArgument("no database built");
  Status err = Close();
  if (!err.ok()) return err;
  block_cache_ = rocksdb::NewLRUCache(bytes);
  rocksdb::Options options = options_;
  const rocksdb::Options fresh =
      MakeOptions(nullptr, block_cache_);  // the table options alone
  const auto* from =
      fresh.table_factory->GetOptions<rocksdb::BlockBasedTableOptions>();
  const auto* was =
      options_.table_factory->GetOptions<rocksdb::BlockBasedTableOptions>();
  if (from == nullptr || was == nullptr) {
    return Status::NotSupported("rocksdb: no block-based table options");
  }
  rocksdb::BlockBasedTableOptions t = *from;
  t.filter_policy = was->filter_policy;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
  const auto open = [&](auto* out_db) {
    return rocksdb::DB::Open(options, dir_, out_db);
  };
  rocksdb::Status s = OpenInto(&db_, open);
  return s.ok() ? Status::OK() : Err("reopen with a block cache", s);
}

Status RocksDBEngine::Load(const KeySpace& keys,
                           const rocksdb::Options& options,
                           const ProgressFn& progress) {
  // Generation sizes: level j of tree_.levels weighs 10^(j-1); L0 weighs 1
  // in all, split into tree_.l0_files files.
  const uint64_t n = keys.num_keys();
  std::vector<double> weights;  // in write order: deepest level first
  for (int j = tree_.levels; j >= 1; j--) {
    weights.push_back(std::pow(10.0, j - 1));
  }
  for (int f = 0; f < tree_.l0_files; f++) {
    weights.push_back(1.0 / tree_.l0_files);
  }
  double total_weight = 0;
  for (double w : weights) total_weight += w;

  uint64_t next = 0;
  double cumulative = 0;
  for (size_t g = 0; g < weights.size(); g++) {
    cumulative += weights[g];
    const uint64_t end = g + 1 == weights.size()
                             ? n
                             : static_cast<uint64_t>(static_cast<double>(n) *
                                                     cumulative / total_weight);
    if (end <= next) continue;
    Status err = WriteAndFlush(keys, next, end, progress);
    if (!err.ok()) return err;
    next = end;
    const int level = tree_.levels - static_cast<int>(g);
    if (level >= 1) {
      err = MoveL0To(level, options);
      if (!err.ok()) return err;
    }
  }
  return Status::OK();
}

Status RocksDBEngine::WriteAndFlush(const KeySpace& keys, uint64_t begin,
                                    uint64_t end, const ProgressFn& progress) {
  rocksdb::WriteOptions wo;
  wo.disableWAL = true;  // every generation is flushed right away
  std::string key, value;
  rocksdb::WriteBatch batch;
  for (uint64_t i = begin; i < end; i++) {
    keys.Key(i, &key);
    keys.Value(i, &value);
    batch.Put(key, value);
    if (batch.Count() == 1000 || i + 1 == end) {
      rocksdb::Status s = db_->Write(wo, &batch);
      if (!s.ok()) return Err("Write", s);
      batch.Clear();
      progress(i + 1, keys.num_keys());
    }
  }
  rocksdb::Status s = db_->Flush(rocksdb::FlushOptions());
  return s.ok() ? Status::OK() : Err("Flush", s);
}

Status RocksDBEngine::MoveL0To(int level, const rocksdb::Options& options) {
  rocksdb::ColumnFamilyMetaData meta;
  db_->GetColumnFamilyMetaData(&meta);
  std::vector<std::string> l0;
  for (const rocksdb::SstFileMetaData& f : meta.levels[0].files) {
    l0.push_back(f.name);
  }
  rocksdb::CompactionOptions co;
  co.compression = rocksdb::kNoCompression;
  co.output_file_size_limit = options.target_file_size_base;
  rocksdb::Status s = db_->CompactFiles(co, l0, level);
  return s.ok() ? Status::OK() : Err("CompactFiles", s);
}

Status RocksDBEngine::LoadNatural(const KeySpace& keys,
                                  const ProgressFn& progress) {
  const uint64_t n = keys.num_keys();
  for (uint64_t begin = 0; begin < n; begin += tree_.keys_per_flush) {
    const uint64_t end = std::min(n, begin + tree_.keys_per_flush);
    Status err = WriteAndFlush(keys, begin, end, progress);
    if (err.ok()) err = WaitForCompactions();
    if (!err.ok()) return err;
  }
  return Status::OK();
}

Status RocksDBEngine::WaitForCompactions() {
  rocksdb::Status s = harness::WaitForCompactions(
      db_.get(), /*compaction_pending=*/!tree_.universal);
  return s.ok() ? Status::OK() : Err("waiting for compactions", s);
}

Status RocksDBEngine::Measure(BuildResult* out) {
  rocksdb::TablePropertiesCollection props;
  rocksdb::Status s = db_->GetPropertiesOfAllTables(&props);
  if (!s.ok()) return Err("GetPropertiesOfAllTables", s);
  for (const auto& [file, p] : props) {
    out->filter_block_bytes += p->filter_size;
    out->index_bytes += p->index_size;
    out->top_level_index_bytes += p->top_level_index_size;
    out->filter_bytes += p->filter_size;
    if (p->filter_size > 0) out->num_filters++;
    out->num_entries += p->num_entries;
  }
  rocksdb::ColumnFamilyMetaData meta;
  db_->GetColumnFamilyMetaData(&meta);
  for (const rocksdb::LevelMetaData& level : meta.levels) {
    out->files_per_level.push_back(static_cast<int>(level.files.size()));
    for (const rocksdb::SstFileMetaData& f : level.files) {
      out->table_bytes += f.size;
      auto p = props.find(f.db_path + f.name);
      if (p == props.end()) {
        return Status::Corruption("no table properties for " + f.db_path +
                                  f.name);
      }
      FilterTable t;
      t.level = level.level;
      t.keys = p->second->num_entries;
      t.filter_bytes = p->second->filter_size;
      out->tables.push_back(t);
    }
  }
  return Status::OK();
}

Status RocksDBEngine::BuiltinFilterBytes(const Policy& p, int level, uint64_t n,
                                         uint64_t* bytes) {
  std::shared_ptr<const rocksdb::FilterPolicy> policy;
  Status err = MakePolicy(p, &policy);
  if (!err.ok()) return err;
  if (!policy) return Status::NotSupported("no filter");
  std::unique_ptr<rocksdb::FilterBitsBuilder> builder = NewLeveledBuilder(
      policy, /*num_levels=*/-1, level,
      level == 0 ? rocksdb::TableFileCreationReason::kFlush
                 : rocksdb::TableFileCreationReason::kCompaction);
  if (!builder) return Status::NotSupported("no filter builder");
  KeySpace keys(n, 16, 0, 0);
  std::string key;
  for (uint64_t i = 0; i < n; i++) {
    keys.Key(i, &key);
    builder->AddKey(key);
  }
  std::unique_ptr<const char[]> buf;
  *bytes = builder->Finish(&buf).size();
  return Status::OK();
}

}  // namespace

RocksDBTree NaturalTree(uint64_t num_keys, int key_size, int value_size,
                        int levels) {
  // RocksDB stores 8 bytes of sequence number and type with every key.
  const double data = static_cast<double>(num_keys) *
                      static_cast<double>(key_size + value_size + 8);
  const double base = data / std::pow(10.0, levels - 1);
  RocksDBTree t;
  t.natural = true;
  t.levels = levels;
  t.l0_files = 0;
  // RocksDB's smallest memtable is 64 KiB.
  t.write_buffer_size =
      std::max<uint64_t>(64 << 10, static_cast<uint64_t>(base / 4));
  t.max_bytes_for_level_base =
      std::max<uint64_t>(t.write_buffer_size, static_cast<uint64_t>(base));
  t.target_file_size_base = t.write_buffer_size;
  // 3/4 of a memtable, so that only the explicit flushes flush; a memtable
  // entry takes ~32 bytes more than its data (skiplist node, lengths).
  const uint64_t entry = static_cast<uint64_t>(key_size + value_size + 8 + 32);
  t.keys_per_flush = std::max<uint64_t>(1, t.write_buffer_size * 3 / 4 / entry);
  return t;
}

std::unique_ptr<Engine> NewRocksDBEngine(bool direct_io,
                                         const RocksDBTree& tree) {
  return std::make_unique<RocksDBEngine>(direct_io, tree);
}

}  // namespace compare
}  // namespace sstfilter

namespace sstfilter {
namespace compare {

Status RocksDBEngine::TimeFilterBuild(const Policy& p, const BuildSlice& slice,
                                      uint64_t keys_per_filter,
                                      uint64_t filters, double* ns_per_key,
                                      double* bits_per_key) {
  // The load's own policy where it was this one: by_level's and auto's
  // builders then plan the slice's tables on the loaded tree, as the
  // load's last ones did (a new policy would see no tree, and build the
  // average's filters).
  const bool loaded = loaded_policy_ != nullptr && loaded_spec_ == p.ToString();
  std::shared_ptr<const rocksdb::FilterPolicy> policy = loaded_policy_;
  if (!loaded) {
    Status err = MakePolicy(p, &policy);
    if (!err.ok()) return err;
  }
  if (!policy) return Status::NotSupported("no filter");
  const int num_levels =
      tree_.natural ? rocksdb::Options().num_levels : tree_.levels + 1;
  const rocksdb::TableFileCreationReason reason =
      slice.reason == "flush" ? rocksdb::TableFileCreationReason::kFlush
      : slice.reason == "compaction"
          ? rocksdb::TableFileCreationReason::kCompaction
          : rocksdb::TableFileCreationReason::kMisc;
  KeySpace keys(keys_per_filter * filters, 16, 0, 1);
  std::string key;
  uint64_t nanos = 0, next = 0, bytes = 0;
  for (uint64_t f = 0; f < filters; f++) {
    std::unique_ptr<rocksdb::FilterBitsBuilder> builder = NewLeveledBuilder(
        policy, num_levels, slice.level, reason, options_.compaction_style,
        loaded ? loaded_info_log_.get() : nullptr);
    if (!builder) return Status::NotSupported("no filter builder");
    for (uint64_t i = 0; i < keys_per_filter; i++) {
      keys.Key(next++, &key);
      builder->AddKey(key);
    }
    std::unique_ptr<const char[]> buf;
    const Clock::time_point start = Clock::now();
    const rocksdb::Slice filter = builder->Finish(&buf);
    nanos += NanosSince(start);
    bytes += filter.size();
  }
  *ns_per_key = NanosPerKey(nanos, next);
  *bits_per_key = 8.0 * static_cast<double>(bytes) / static_cast<double>(next);
  return Status::OK();
}

}  // namespace compare
}  // namespace sstfilter
