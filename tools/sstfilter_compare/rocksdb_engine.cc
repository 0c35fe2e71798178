// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// RocksDB (7.x) as the comparison drives it.
//
// Counting. Table-file reads are counted by a FileSystemWrapper whose
// random-access files call CountRead for every Read and every request of a
// MultiRead. Tables are opened at DB::Open (max_open_files = -1) with
// cache_index_and_filter_blocks = false, so each table reader holds its
// index and filter in memory from then on, and there is no block cache
// (no_block_cache): every block a lookup needs is one counted read, and
// every such read is a data block. RocksDB's perf context (block_read_count,
// index/filter_block_read_count, bloom_sst_hit/miss_count) and statistics
// tickers (BLOOM_FILTER_USEFUL, BLOOM_FILTER_FULL_POSITIVE) are kept beside
// for cross-checks.
//
// Filters. Every policy -- built-in or sstfilter -- is wrapped in a policy
// that delegates everything and adds two measurements: the time spent in
// its builders' Finish (where filters are built; AddKey only hashes) and
// every answer of its readers (CountProbes). The wrapper declares RocksDB's
// FilterBitsBuilder/FilterBitsReader through the adapter's ABI header.
//
// Tree shape. Automatic compactions are off and the tree is built the same
// way for every policy: keys are written in generations, largest first; each
// generation is flushed and moved by CompactFiles to its level (L<levels>
// .. L1, sizes in ratio 10:1 like a leveled LSM), and the last keys become
// <l0_files> L0 files. Every policy thus gets the same files and levels.

#include <fcntl.h>
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
#include <rocksdb/version.h>
#include <rocksdb/write_batch.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "adapters/rocksdb/rocksdb_abi.h"
#include "adapters/rocksdb/rocksdb_forwarding.h"
#include "sstfilter/rocksdb.h"
#include "tools/sstfilter_compare/counters.h"
#include "tools/sstfilter_compare/engine.h"

namespace sstfilter {
namespace compare {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// --- counting file system
// -----------------------------------------------------

class CountingFile : public rocksdb::FSRandomAccessFileOwnerWrapper {
 public:
  using FSRandomAccessFileOwnerWrapper::FSRandomAccessFileOwnerWrapper;

  rocksdb::IOStatus Read(uint64_t offset, size_t n,
                         const rocksdb::IOOptions& options,
                         rocksdb::Slice* result, char* scratch,
                         rocksdb::IODebugContext* dbg) const override {
    rocksdb::IOStatus s =
        target()->Read(offset, n, options, result, scratch, dbg);
    CountRead(result->size());
    return s;
  }

  rocksdb::IOStatus MultiRead(rocksdb::FSReadRequest* reqs, size_t num_reqs,
                              const rocksdb::IOOptions& options,
                              rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s = target()->MultiRead(reqs, num_reqs, options, dbg);
    for (size_t i = 0; i < num_reqs; i++) CountRead(reqs[i].result.size());
    return s;
  }
};

class CountingFileSystem : public rocksdb::FileSystemWrapper {
 public:
  explicit CountingFileSystem(const std::shared_ptr<rocksdb::FileSystem>& base)
      : FileSystemWrapper(base) {}

  const char* Name() const override { return "SstfilterCountingFileSystem"; }

  rocksdb::IOStatus NewRandomAccessFile(
      const std::string& name, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSRandomAccessFile>* result,
      rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s =
        target()->NewRandomAccessFile(name, options, result, dbg);
    if (s.ok() && EndsWith(name, ".sst")) {
      result->reset(new CountingFile(std::move(*result)));
    }
    return s;
  }
};

// --- instrumented filter policy
// -----------------------------------------------

struct BuildClock {
  std::atomic<uint64_t> nanos{0};
  std::atomic<uint64_t> filters{0};
};

class TimedBuilder final : public internal::ForwardingBitsBuilder {
 public:
  TimedBuilder(rocksdb::FilterBitsBuilder* inner, BuildClock* clock)
      : ForwardingBitsBuilder(inner), clock_(clock) {}

  rocksdb::Slice Finish(std::unique_ptr<const char[]>* buf) override {
    const Clock::time_point t = Clock::now();
    rocksdb::Slice s = inner()->Finish(buf);
    Record(t);
    return s;
  }
  rocksdb::Slice Finish(std::unique_ptr<const char[]>* buf,
                        rocksdb::Status* status) override {
    const Clock::time_point t = Clock::now();
    rocksdb::Slice s = inner()->Finish(buf, status);
    Record(t);
    return s;
  }

 private:
  void Record(Clock::time_point start) {
    clock_->nanos.fetch_add(
        static_cast<uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() -
                                                                 start)
                .count()),
        std::memory_order_relaxed);
    clock_->filters.fetch_add(1, std::memory_order_relaxed);
  }

  BuildClock* const clock_;
};

class CountingReader final : public rocksdb::FilterBitsReader {
 public:
  explicit CountingReader(rocksdb::FilterBitsReader* inner) : inner_(inner) {}

  bool MayMatch(const rocksdb::Slice& entry) override {
    const bool r = inner_->MayMatch(entry);
    CountProbes(1, r ? 1 : 0);
    return r;
  }
  void MayMatch(int num_keys, rocksdb::Slice** keys, bool* may_match) override {
    inner_->MayMatch(num_keys, keys, may_match);
    uint64_t positives = 0;
    for (int i = 0; i < num_keys; i++) positives += may_match[i] ? 1 : 0;
    CountProbes(static_cast<uint64_t>(num_keys), positives);
  }

 private:
  const std::unique_ptr<rocksdb::FilterBitsReader> inner_;
};

// Delegates everything to `inner` (so files carry the inner policy's names
// and format) and measures as described at the top.
class InstrumentedPolicy final : public rocksdb::FilterPolicy {
 public:
  InstrumentedPolicy(std::shared_ptr<const rocksdb::FilterPolicy> inner,
                     BuildClock* clock)
      : inner_(std::move(inner)), clock_(clock) {}

  const char* Name() const override { return inner_->Name(); }
  const char* CompatibilityName() const override {
    return inner_->CompatibilityName();
  }
  std::string GetId() const override { return inner_->GetId(); }

  rocksdb::FilterBitsBuilder* GetBuilderWithContext(
      const rocksdb::FilterBuildingContext& context) const override {
    rocksdb::FilterBitsBuilder* b = inner_->GetBuilderWithContext(context);
    return b == nullptr ? nullptr : new TimedBuilder(b, clock_);
  }
  rocksdb::FilterBitsReader* GetFilterBitsReader(
      const rocksdb::Slice& contents) const override {
    rocksdb::FilterBitsReader* r = inner_->GetFilterBitsReader(contents);
    return r == nullptr ? nullptr : new CountingReader(r);
  }

 private:
  const std::shared_ptr<const rocksdb::FilterPolicy> inner_;
  BuildClock* const clock_;
};

// The engine's policy object for `p`, or null for "none".
std::string MakePolicy(const Policy& p,
                       std::shared_ptr<const rocksdb::FilterPolicy>* out) {
  out->reset();
  switch (p.family) {
    case Family::kNone:
      return "";
    case Family::kRocksDBBloom:
      out->reset(rocksdb::NewBloomFilterPolicy(p.bits_per_key));
      return "";
    case Family::kRocksDBRibbon:
      // Default bloom_before_level (0): Bloom for flushes, Ribbon for every
      // compaction output, as RocksDB recommends.
      out->reset(rocksdb::NewRibbonFilterPolicy(p.bits_per_key));
      return "";
    case Family::kSstfilter: {
      rocksdb::Status s = NewRocksDBFilterPolicy(p.spec.ToString(), out);
      return s.ok() ? "" : s.ToString();
    }
    case Family::kLevelDBBloom:
      break;
  }
  return "policy " + p.ToString() + " does not run on RocksDB";
}

std::string Err(const char* what, const rocksdb::Status& s) {
  return std::string("rocksdb ") + what + ": " + s.ToString();
}

// --- the engine
// -----------------------------------------------------------------

class RocksDBEngine final : public Engine {
 public:
  RocksDBEngine(bool direct_io, int levels, int l0_files)
      : direct_io_(direct_io),
        levels_(levels),
        l0_files_(l0_files),
        fs_(std::make_shared<CountingFileSystem>(
            rocksdb::FileSystem::Default())),
        env_(rocksdb::NewCompositeEnv(fs_)) {}

  ~RocksDBEngine() override { Close(); }

  const char* name() const override { return "rocksdb"; }
  std::string version() const override {
    return rocksdb::GetRocksVersionAsString(true);
  }
  std::string io_mode() const override {
    return direct_io_ ? "direct I/O (use_direct_reads), no block cache"
                      : "page cache (O_DIRECT not available), no block cache";
  }
  bool has_multiget() const override { return true; }

  std::string Build(const Policy& policy, const KeySpace& keys,
                    const std::string& dir, const ProgressFn& progress,
                    BuildResult* out) override;

  std::string BuiltinFilterBytes(const Policy& p, uint64_t n,
                                 uint64_t* bytes) override;

  void ThreadBegin() override {
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
    rocksdb::get_perf_context()->Reset();
  }
  void ThreadEnd(EngineCounters* c) override {
    const rocksdb::PerfContext* p = rocksdb::get_perf_context();
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

  std::string Get(const std::string& key, std::string* value,
                  bool* found) override {
    rocksdb::Status s = db_->Get(read_options_, key, value);
    *found = s.ok();
    if (s.ok() || s.IsNotFound()) return "";
    return Err("Get", s);
  }

  std::string MultiGet(const std::vector<std::string>& keys,
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
    return "";
  }

  std::string Close() override {
    if (db_ == nullptr) return "";
    rocksdb::Status s = db_->Close();
    db_.reset();
    return s.ok() ? "" : Err("Close", s);
  }

 private:
  rocksdb::Options MakeOptions(
      const std::shared_ptr<const rocksdb::FilterPolicy>& policy) {
    rocksdb::Options o;
    o.env = env_.get();
    o.create_if_missing = true;
    o.error_if_exists = true;
    o.compression = rocksdb::kNoCompression;
    o.bottommost_compression = rocksdb::kDisableCompressionOption;
    o.disable_auto_compactions = true;
    o.num_levels = levels_ + 1;
    o.max_open_files = -1;  // open every table, index and filter at Open
    o.use_direct_reads = direct_io_;
    o.statistics = statistics_;
    o.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
    rocksdb::BlockBasedTableOptions t;
    t.no_block_cache = true;
    t.cache_index_and_filter_blocks = false;
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
  }

  std::string Measure(BuildResult* out);

  const bool direct_io_;
  const int levels_;
  const int l0_files_;
  const std::shared_ptr<rocksdb::FileSystem> fs_;
  const std::unique_ptr<rocksdb::Env> env_;
  std::shared_ptr<rocksdb::Statistics> statistics_;
  std::unique_ptr<BuildClock> clock_;
  std::unique_ptr<rocksdb::DB> db_;
  rocksdb::ReadOptions read_options_;
  EngineCounters tickers_before_;
};

std::string RocksDBEngine::Build(const Policy& policy, const KeySpace& keys,
                                 const std::string& dir,
                                 const ProgressFn& progress, BuildResult* out) {
  Close();
  *out = BuildResult();
  std::shared_ptr<const rocksdb::FilterPolicy> inner;
  std::string err = MakePolicy(policy, &inner);
  if (!err.empty()) return err;
  clock_ = std::make_unique<BuildClock>();
  std::shared_ptr<const rocksdb::FilterPolicy> instrumented;
  if (inner) {
    instrumented = std::make_shared<InstrumentedPolicy>(inner, clock_.get());
  }
  statistics_ = rocksdb::CreateDBStatistics();
  rocksdb::Options options = MakeOptions(instrumented);

  const Clock::time_point start = Clock::now();
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, dir, &raw);
  if (!s.ok()) return Err("Open", s);
  db_.reset(raw);

  // Generation sizes: level j of levels_ weighs 10^(j-1); L0 weighs 1 in
  // all, split into l0_files_ files.
  const uint64_t n = keys.num_keys();
  std::vector<double> weights;  // in write order: deepest level first
  for (int j = levels_; j >= 1; j--) weights.push_back(std::pow(10.0, j - 1));
  for (int f = 0; f < l0_files_; f++) weights.push_back(1.0 / l0_files_);
  double total_weight = 0;
  for (double w : weights) total_weight += w;

  rocksdb::WriteOptions wo;
  wo.disableWAL = true;  // every generation is flushed right away
  std::string key, value;
  uint64_t next = 0;
  double cumulative = 0;
  for (size_t g = 0; g < weights.size(); g++) {
    cumulative += weights[g];
    const uint64_t end = g + 1 == weights.size()
                             ? n
                             : static_cast<uint64_t>(static_cast<double>(n) *
                                                     cumulative / total_weight);
    if (end <= next) continue;
    rocksdb::WriteBatch batch;
    for (; next < end; next++) {
      keys.Key(next, &key);
      keys.Value(next, &value);
      batch.Put(key, value);
      if (batch.Count() == 1000 || next + 1 == end) {
        s = db_->Write(wo, &batch);
        if (!s.ok()) return Err("Write", s);
        batch.Clear();
        progress(next + 1, n);
      }
    }
    s = db_->Flush(rocksdb::FlushOptions());
    if (!s.ok()) return Err("Flush", s);
    const int level = levels_ - static_cast<int>(g);
    if (level >= 1) {
      rocksdb::ColumnFamilyMetaData meta;
      db_->GetColumnFamilyMetaData(&meta);
      std::vector<std::string> l0;
      for (const rocksdb::SstFileMetaData& f : meta.levels[0].files) {
        l0.push_back(f.name);
      }
      rocksdb::CompactionOptions co;
      co.compression = rocksdb::kNoCompression;
      co.output_file_size_limit = options.target_file_size_base;
      s = db_->CompactFiles(co, l0, level);
      if (!s.ok()) return Err("CompactFiles", s);
    }
  }
  out->load_seconds = SecondsSince(start);
  out->filter_build_seconds = static_cast<double>(clock_->nanos.load()) * 1e-9;
  out->filters_built = clock_->filters.load();

  err = Measure(out);
  if (!err.empty()) return err;

  // Reopen: every table reader is opened afresh with its index and filter.
  err = Close();
  if (!err.empty()) return err;
  options.error_if_exists = false;
  options.create_if_missing = false;
  s = rocksdb::DB::Open(options, dir, &raw);
  if (!s.ok()) return Err("reopen", s);
  db_.reset(raw);
  uint64_t mem = 0;
  if (db_->GetIntProperty(rocksdb::DB::Properties::kEstimateTableReadersMem,
                          &mem)) {
    out->table_reader_memory = mem;
  }
  return "";
}

std::string RocksDBEngine::Measure(BuildResult* out) {
  rocksdb::TablePropertiesCollection props;
  rocksdb::Status s = db_->GetPropertiesOfAllTables(&props);
  if (!s.ok()) return Err("GetPropertiesOfAllTables", s);
  for (const auto& [file, p] : props) {
    out->filter_block_bytes += p->filter_size;
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
    }
  }
  return "";
}

std::string RocksDBEngine::BuiltinFilterBytes(const Policy& p, uint64_t n,
                                              uint64_t* bytes) {
  std::shared_ptr<const rocksdb::FilterPolicy> policy;
  std::string err = MakePolicy(p, &policy);
  if (!err.empty()) return err;
  if (!policy) return "no filter";
  rocksdb::BlockBasedTableOptions t;
  t.filter_policy = policy;
  rocksdb::FilterBuildingContext context(t);
  context.compaction_style = rocksdb::kCompactionStyleLevel;
  context.level_at_creation = 1;
  std::unique_ptr<rocksdb::FilterBitsBuilder> builder(
      policy->GetBuilderWithContext(context));
  if (!builder) return "no filter builder";
  KeySpace keys(n, 16, 0, 0);
  std::string key;
  for (uint64_t i = 0; i < n; i++) {
    keys.Key(i, &key);
    builder->AddKey(key);
  }
  std::unique_ptr<const char[]> buf;
  *bytes = builder->Finish(&buf).size();
  return "";
}

}  // namespace

std::unique_ptr<Engine> NewRocksDBEngine(bool direct_io, int levels,
                                         int l0_files) {
  return std::make_unique<RocksDBEngine>(direct_io, levels, l0_files);
}

}  // namespace compare
}  // namespace sstfilter
