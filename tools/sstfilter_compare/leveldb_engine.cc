// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// LevelDB (1.23) as the comparison drives it.
//
// Counting. The harness's EnvWrapper (harness/leveldb_counting.h) wraps the
// random-access files of tables (*.ldb, *.sst) so that every Read calls
// CountRead. LevelDB has no direct I/O (it
// reads tables through mmap or pread, i.e. the page cache), so the block
// cache is made empty (capacity 0) and lookups do not fill it: every block
// a Get needs is one counted read. Table::Open reads a table's index and
// filter block once and keeps them; a full scan opens every table before
// the lookups, so the counted reads are data blocks.
//
// Filters. The policy is wrapped in one that delegates (same Name(), so the
// same "filter.<name>" meta block) and adds the time spent in CreateFilter,
// split by the job that built the table (flush or compaction into a level,
// from the info log: JobLogger), and every KeyMayMatch answer
// (CountProbes). On-disk filter sizes are read
// from the finished tables: footer -> metaindex block -> "filter.<name>"
// handle -> filter block, whose offset array gives every filter's length
// (the table layout of LevelDB's doc/table_format.md).
//
// Tree shape. LevelDB decides it (its level sizes are fixed: 10 MB for L1,
// 10x more per level), from a load made deterministic: keys arrive in
// chunks of 3/4 of a memtable, each flushed and its compactions finished
// before the next. During lookups LevelDB schedules "seek" compactions of
// tables that Gets probe in vain. The Env holds such work back until the
// lookups are over, so every phase of every policy sees the tree the load left.

#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/env.h>
#include <leveldb/filter_policy.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/table.h>
#include <leveldb/write_batch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "harness/leveldb_counting.h"
#include "sstfilter/leveldb.h"
#include "tools/leveldb_table.h"
#include "tools/sstfilter_compare/engine.h"

namespace sstfilter {
namespace compare {
namespace {

// --- counting, scheduling Env
// ---------------------------------------------------

// The harness's counting Env, which also holds background work back on
// request.
class CountingEnv final : public harness::CountingEnv {
 public:
  // Background work goes through here; it runs now, or, while held, later.
  void Schedule(void (*function)(void*), void* arg) override {
    {
      std::lock_guard<std::mutex> l(mu_);
      pending_++;
      if (hold_) {
        held_.push_back({function, arg});
        return;
      }
    }
    Forward({function, arg});
  }

  // From Hold() to Release(), scheduled work waits.
  void Hold() {
    std::lock_guard<std::mutex> l(mu_);
    hold_ = true;
  }
  void Release() {
    std::vector<Job> jobs;
    {
      std::lock_guard<std::mutex> l(mu_);
      hold_ = false;
      jobs.swap(held_);
    }
    for (const Job& j : jobs) Forward(j);
  }
  // Waits until no background work is scheduled or running.
  // REQUIRES: not held.
  void WaitIdle() {
    std::unique_lock<std::mutex> l(mu_);
    idle_.wait(l, [this] { return pending_ == 0; });
  }

 private:
  struct Job {
    void (*function)(void*);
    void* arg;
  };
  struct Call {
    CountingEnv* env;
    Job job;
  };

  void Forward(const Job& job) {
    target()->Schedule(&Trampoline, new Call{this, job});
  }
  static void Trampoline(void* p) {
    std::unique_ptr<Call> call(static_cast<Call*>(p));
    call->job.function(call->job.arg);
    // LevelDB reschedules follow-up work from inside the job, so pending_
    // reaches 0 only when nothing is left.
    std::lock_guard<std::mutex> l(call->env->mu_);
    if (--call->env->pending_ == 0) call->env->idle_.notify_all();
  }

  std::mutex mu_;
  std::condition_variable idle_;
  int pending_ = 0;
  bool hold_ = false;
  std::vector<Job> held_;
};

// --- what the building thread is doing
// ----------------------------------------

// LevelDB tells a filter policy nothing about the table it builds for, but
// it logs each job to its info log on the thread that runs it, just before
// the tables: "Level-0 table #N: started" for a memtable written to a table
// (a flush), "Level-0 table #N: <bytes> bytes <status>" when that ends, and
// "Compacting a@L + b@L+1 files" for a compaction into level L+1. This
// Logger keeps, per thread, the job it last saw (and discards the text).
struct Job {
  const char* reason = "other";
  int level = -1;
};
thread_local Job current_job;

class JobLogger final : public leveldb::Logger {
 public:
  void Logv(const char* format, va_list ap) override {
    static thread_local Job before_flush;
    if (std::strcmp(format, "Level-0 table #%llu: started") == 0) {
      before_flush = current_job;  // a flush may run inside a compaction
      current_job = {"flush", -1};
    } else if (std::strncmp(format, "Level-0 table #%llu: %lld bytes", 31) ==
               0) {
      current_job = before_flush;
    } else if (std::strcmp(format, "Compacting %d@%d + %d@%d files") == 0) {
      va_list copy;
      va_copy(copy, ap);
      (void)va_arg(copy, int);
      (void)va_arg(copy, int);
      (void)va_arg(copy, int);
      current_job = {"compaction", va_arg(copy, int)};
      va_end(copy);
    }
  }
};

// --- instrumented filter policy
// -----------------------------------------------

class InstrumentedPolicy final : public leveldb::FilterPolicy {
 public:
  explicit InstrumentedPolicy(const leveldb::FilterPolicy* inner)
      : inner_(inner) {}

  const char* Name() const override { return inner_->Name(); }

  void CreateFilter(const leveldb::Slice* keys, int n,
                    std::string* dst) const override {
    const Clock::time_point t = Clock::now();
    inner_->CreateFilter(keys, n, dst);
    const uint64_t nanos = NanosSince(t);
    nanos_.fetch_add(nanos, std::memory_order_relaxed);
    filters_.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> l(mu_);
    BuildSlice* slice = nullptr;
    for (BuildSlice& b : split_) {
      if (b.reason == current_job.reason && b.level == current_job.level) {
        slice = &b;
      }
    }
    if (slice == nullptr) {
      split_.push_back({current_job.reason, current_job.level, 0, 0, 0});
      slice = &split_.back();
    }
    slice->nanos += nanos;
    slice->keys += static_cast<uint64_t>(n);
    slice->filters++;
  }

  bool KeyMayMatch(const leveldb::Slice& key,
                   const leveldb::Slice& filter) const override {
    const bool r = inner_->KeyMayMatch(key, filter);
    harness::CountProbes(1, r ? 1 : 0);
    return r;
  }

  double build_seconds() const {
    return static_cast<double>(nanos_.load()) * 1e-9;
  }
  uint64_t filters() const { return filters_.load(); }
  // Flushes first, then compactions by output level.
  std::vector<BuildSlice> split() const {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<BuildSlice> out = split_;
    std::sort(out.begin(), out.end(),
              [](const BuildSlice& a, const BuildSlice& b) {
                const int ra = a.reason == std::string("flush")        ? 0
                               : a.reason == std::string("compaction") ? 1
                                                                       : 2;
                const int rb = b.reason == std::string("flush")        ? 0
                               : b.reason == std::string("compaction") ? 1
                                                                       : 2;
                return ra != rb ? ra < rb : a.level < b.level;
              });
    return out;
  }

 private:
  const leveldb::FilterPolicy* const inner_;
  mutable std::atomic<uint64_t> nanos_{0};
  mutable std::atomic<uint64_t> filters_{0};
  mutable std::mutex mu_;
  mutable std::vector<BuildSlice> split_;
};

Status MakePolicy(const Policy& p,
                  std::unique_ptr<const leveldb::FilterPolicy>* out) {
  out->reset();
  switch (p.family) {
    case Family::kNone:
      return Status::OK();
    case Family::kLevelDBBloom:
      out->reset(
          leveldb::NewBloomFilterPolicy(static_cast<int>(p.bits_per_key)));
      return Status::OK();
    case Family::kSstfilter: {
      leveldb::Status s =
          NewLevelDBFilterPolicy(p.spec.ToString(), RunSecret(), out);
      return s.ok() ? Status::OK() : Status::InvalidArgument(s.ToString());
    }
    default:
      break;
  }
  return Status::NotSupported("policy " + p.ToString() +
                              " does not run on LevelDB");
}

Status Err(const char* what, const leveldb::Status& s) {
  return EngineError(std::string("leveldb ") + what, s.ToString());
}

struct FilterBlockStats {
  uint64_t block_bytes = 0;   // filter block with its 5-byte block trailer
  uint64_t contents = 0;      // filter block without the trailer
  uint64_t filter_bytes = 0;  // the filters alone
  uint64_t num_filters = 0;   // non-empty ones
  uint64_t index_bytes = 0;   // index blocks without their trailers
};

// Adds the index block and the filter block (meta key `meta_key`) of table
// `path` to *stats. A table without a filter adds its index alone.
Status AddTableBlocks(const std::string& path, const std::string& meta_key,
                      FilterBlockStats* stats) {
  tool::LevelDBFilterBlock block;
  const Status s = tool::ReadLevelDBFilterBlock(path, &block);
  if (!s.ok()) return s;
  stats->index_bytes += block.index_bytes;
  if (block.policy_name.empty() || "filter." + block.policy_name != meta_key) {
    return Status::OK();
  }
  for (const std::string& f : block.filters) {
    stats->filter_bytes += f.size();
    if (!f.empty()) stats->num_filters++;
  }
  stats->block_bytes += block.block_bytes + 5;  // with its block trailer
  stats->contents += block.block_bytes;
  return Status::OK();
}

// Parses the "leveldb.sstables" property: per level, lines
// " <number>:<size>[<smallest> .. <largest>]". *numbers gets each table's
// number, *levels its level.
void ParseSSTables(const std::string& text, std::vector<int>* per_level,
                   std::vector<uint64_t>* numbers, std::vector<int>* levels) {
  int level = -1;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.rfind("--- level ", 0) == 0) {
      level = std::atoi(line.c_str() + 10);
      if (level >= 0 && static_cast<size_t>(level) >= per_level->size()) {
        per_level->resize(static_cast<size_t>(level) + 1, 0);
      }
      continue;
    }
    if (level < 0 || line.size() < 2 || line[0] != ' ') continue;
    char* after = nullptr;
    const uint64_t number = std::strtoull(line.c_str() + 1, &after, 10);
    if (after == line.c_str() + 1 || *after != ':') continue;
    (*per_level)[static_cast<size_t>(level)]++;
    numbers->push_back(number);
    levels->push_back(level);
  }
}

// The entries of the table at `path`, read with LevelDB's own reader
// outside the database (no cache, no filter; not counted).
Status CountEntries(const std::string& path, uint64_t size, uint64_t* out) {
  leveldb::Env* env = leveldb::Env::Default();
  leveldb::RandomAccessFile* raw = nullptr;
  leveldb::Status s = env->NewRandomAccessFile(path, &raw);
  if (!s.ok()) return EngineError("leveldb open " + path, s.ToString());
  const std::unique_ptr<leveldb::RandomAccessFile> file(raw);
  leveldb::Table* table = nullptr;
  s = leveldb::Table::Open(leveldb::Options(), file.get(), size, &table);
  if (!s.ok()) return EngineError("leveldb Table::Open " + path, s.ToString());
  const std::unique_ptr<leveldb::Table> owner(table);
  const std::unique_ptr<leveldb::Iterator> it(
      table->NewIterator(leveldb::ReadOptions()));
  *out = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) (*out)++;
  return it->status().ok()
             ? Status::OK()
             : EngineError("leveldb read " + path, it->status().ToString());
}

// --- the engine
// -----------------------------------------------------------------

class LevelDBEngine final : public Engine {
 public:
  LevelDBEngine() : cache_(leveldb::NewLRUCache(0)) {
    read_options_.fill_cache = false;
  }
  // A destructor has no one to report a failed close to.
  ~LevelDBEngine() override { (void)Close(); }

  const char* name() const override { return "leveldb"; }
  std::string version() const override {
    return std::to_string(leveldb::kMajorVersion) + "." +
           std::to_string(leveldb::kMinorVersion);
  }
  std::string io_mode() const override {
    return "page cache (LevelDB has no direct I/O), block cache of 0 bytes, "
           "fill_cache=false";
  }
  bool has_multiget() const override { return false; }

  Status Build(const Policy& policy, const KeySpace& keys,
               const std::string& dir, const ProgressFn& progress,
               BuildResult* out) override;

  Status Get(const std::string& key, std::string* value, bool* found) override {
    leveldb::Status s = db_->Get(read_options_, key, value);
    *found = s.ok();
    if (s.ok() || s.IsNotFound()) return Status::OK();
    return Err("Get", s);
  }

  Status MultiGet(const std::vector<std::string>&, std::vector<std::string>*,
                  std::vector<bool>*) override {
    return Status::NotSupported("LevelDB has no MultiGet");
  }

  // LevelDB tells a filter policy no level: `level` changes nothing.
  Status BuiltinFilterBytes(const Policy& p, int /*level*/, uint64_t n,
                            uint64_t* bytes) override {
    std::unique_ptr<const leveldb::FilterPolicy> policy;
    Status err = MakePolicy(p, &policy);
    if (!err.ok()) return err;
    if (!policy) return Status::NotSupported("no filter");
    KeySpace space(n, 16, 0, 0);
    std::vector<std::string> keys(n);
    for (uint64_t i = 0; i < n; i++) space.Key(i, &keys[i]);
    std::vector<leveldb::Slice> slices(keys.begin(), keys.end());
    std::string dst;
    policy->CreateFilter(slices.data(), static_cast<int>(n), &dst);
    *bytes = dst.size();
    return Status::OK();
  }

  Status TimeFilterBuild(const Policy& p, const BuildSlice& /*slice*/,
                         uint64_t keys_per_filter, uint64_t filters,
                         double* ns_per_key, double* bits_per_key) override {
    std::unique_ptr<const leveldb::FilterPolicy> policy;
    Status err = MakePolicy(p, &policy);
    if (!err.ok()) return err;
    if (!policy) return Status::NotSupported("no filter");
    KeySpace space(keys_per_filter * filters, 16, 0, 1);
    std::vector<std::string> keys(keys_per_filter);
    std::vector<leveldb::Slice> slices(keys_per_filter);
    uint64_t nanos = 0, next = 0, bytes = 0;
    std::string dst;
    for (uint64_t f = 0; f < filters; f++) {
      for (uint64_t i = 0; i < keys_per_filter; i++) {
        space.Key(next++, &keys[i]);
        slices[i] = keys[i];
      }
      dst.clear();
      const Clock::time_point start = Clock::now();
      policy->CreateFilter(slices.data(), static_cast<int>(keys_per_filter),
                           &dst);
      nanos += NanosSince(start);
      bytes += dst.size();
    }
    *ns_per_key = NanosPerKey(nanos, next);
    *bits_per_key =
        8.0 * static_cast<double>(bytes) / static_cast<double>(next);
    return Status::OK();
  }

  // The database reopened with a block cache of `bytes` that Gets fill;
  // LevelDB keeps each open table's index and filter outside it, so they
  // are what the database holds outside the cache (MemoryInUse).
  Status ReopenWithBlockCache(uint64_t bytes) override {
    if (db_ == nullptr) return Status::InvalidArgument("no database built");
    Status err = Close();
    if (!err.ok()) return err;
    budget_cache_.reset(leveldb::NewLRUCache(static_cast<size_t>(bytes)));
    env_.set_copy_reads(true);  // so that blocks of mapped tables are cached
    leveldb::Options options = MakeOptions();
    options.block_cache = budget_cache_.get();
    options.error_if_exists = false;
    err = Open(options, dir_);
    if (err.ok()) err = OpenEveryTable(nullptr);
    read_options_.fill_cache = true;
    return err;
  }
  void MemoryInUse(uint64_t* cache, uint64_t* outside) override {
    *cache = budget_cache_ ? budget_cache_->TotalCharge() : 0;
    *outside = held_outside_;
  }

  Status Close() override {
    if (db_ == nullptr) return Status::OK();
    env_.Release();  // held work must run (it sees the shutdown) first
    db_.reset();
    env_.WaitIdle();
    return Status::OK();
  }

 private:
  // Loads the key space in chunks: see Load's comment.
  Status Load(const KeySpace& keys, const leveldb::Options& options,
              const ProgressFn& progress);
  // Measures the finished database's tables and filters.
  Status Measure(const std::string& dir, BuildResult* out);

  leveldb::Options MakeOptions() {
    leveldb::Options o;
    o.env = &env_;
    o.create_if_missing = true;
    o.error_if_exists = true;
    o.compression = leveldb::kNoCompression;
    o.block_cache = cache_.get();
    o.block_size = 4096;
    o.max_open_files = 50000;  // keep every table open (LevelDB's maximum)
    o.filter_policy = policy_.get();
    o.info_log = &logger_;  // LevelDB then writes no LOG file
    return o;
  }

  Status Open(const leveldb::Options& options, const std::string& dir) {
    leveldb::DB* raw = nullptr;
    leveldb::Status s = leveldb::DB::Open(options, dir, &raw);
    if (!s.ok()) return Err("Open", s);
    db_.reset(raw);
    return Status::OK();
  }

  // Holds background work back and opens every table with a full scan
  // that fills no cache (not counted: this thread has no counters); counts
  // the entries into *entries if not null.
  Status OpenEveryTable(uint64_t* entries) {
    env_.WaitIdle();
    env_.Hold();
    leveldb::ReadOptions scan;
    scan.fill_cache = false;
    std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(scan));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      if (entries != nullptr) (*entries)++;
    }
    return it->status().ok() ? Status::OK() : Err("scan", it->status());
  }

  CountingEnv env_;
  JobLogger logger_;
  const std::unique_ptr<leveldb::Cache> cache_;
  std::unique_ptr<const leveldb::FilterPolicy> inner_;
  std::unique_ptr<InstrumentedPolicy> policy_;
  std::unique_ptr<leveldb::DB> db_;
  leveldb::ReadOptions read_options_;
  std::string dir_;                               // the last database built
  std::unique_ptr<leveldb::Cache> budget_cache_;  // ReopenWithBlockCache's
  uint64_t held_outside_ = 0;  // index and filter blocks of the open tables
};

Status LevelDBEngine::Build(const Policy& policy, const KeySpace& keys,
                            const std::string& dir, const ProgressFn& progress,
                            BuildResult* out) {
  Status err = Close();  // a database left open by a failed run
  if (!err.ok()) return err;
  *out = BuildResult();
  err = MakePolicy(policy, &inner_);
  if (!err.ok()) return err;
  policy_.reset(inner_ ? new InstrumentedPolicy(inner_.get()) : nullptr);
  budget_cache_.reset();
  env_.set_copy_reads(false);
  read_options_.fill_cache = false;
  dir_ = dir;
  leveldb::Options options = MakeOptions();

  const Clock::time_point start = Clock::now();
  err = Open(options, dir);
  if (!err.ok()) return err;
  err = Load(keys, options, progress);
  if (!err.ok()) return err;
  out->load_seconds = SecondsSince(start);
  if (policy_) {
    out->filter_build_seconds = policy_->build_seconds();
    out->filters_built = policy_->filters();
    out->build_split = policy_->split();
  }
  err = Measure(dir, out);
  if (!err.ok()) return err;

  // Reopen, hold background work, and open every table with a full scan
  // (not counted: this thread has no counters). Entries are counted on
  // the way.
  err = Close();
  if (!err.ok()) return err;
  options.error_if_exists = false;
  err = Open(options, dir);
  if (err.ok()) err = OpenEveryTable(&out->num_entries);
  held_outside_ = out->index_bytes + static_cast<uint64_t>(std::max<int64_t>(
                                         0, out->filter_memory_bytes));
  return err;
}

Status LevelDBEngine::Load(const KeySpace& keys,
                           const leveldb::Options& options,
                           const ProgressFn& progress) {
  // The same tree for every policy: LevelDB switches memtables only where
  // we say, and every compaction that a switch triggers runs to its end
  // before more keys arrive, so the sequence of flushes and compactions
  // does not depend on timing. A chunk fills at most 3/4 of a memtable
  // (an entry costs its bytes plus under 48 of sequence number, lengths
  // and skiplist node).
  const uint64_t entry_bytes =
      static_cast<uint64_t>(keys.key_size() + keys.value_size() + 48);
  const uint64_t chunk =
      std::max<uint64_t>(1, options.write_buffer_size * 3 / 4 / entry_bytes);
  const uint64_t n = keys.num_keys();
  std::string key, value;
  leveldb::WriteBatch batch;
  // CompactRange over an empty range below every key compacts the
  // memtable and nothing else.
  const leveldb::Slice below("");
  for (uint64_t i = 0; i < n;) {
    const uint64_t end = std::min(n, i + chunk);
    for (; i < end; i++) {
      keys.Key(i, &key);
      keys.Value(i, &value);
      batch.Put(key, value);
      if (batch.ApproximateSize() >= 64 * 1024 || i + 1 == end) {
        leveldb::Status s = db_->Write(leveldb::WriteOptions(), &batch);
        if (!s.ok()) return Err("Write", s);
        batch.Clear();
      }
    }
    db_->CompactRange(&below, &below);
    env_.WaitIdle();
    progress(i, n);
  }
  return Status::OK();
}

Status LevelDBEngine::Measure(const std::string& dir, BuildResult* out) {
  std::string sstables;
  db_->GetProperty("leveldb.sstables", &sstables);
  std::vector<uint64_t> numbers;
  std::vector<int> levels;
  ParseSSTables(sstables, &out->files_per_level, &numbers, &levels);
  FilterBlockStats stats;
  const std::string meta_key =
      policy_ ? std::string("filter.") + policy_->Name() : std::string();
  for (size_t i = 0; i < numbers.size(); i++) {
    char name[32];
    std::snprintf(name, sizeof(name), "/%06llu.ldb",
                  static_cast<unsigned long long>(numbers[i]));
    const std::string path = dir + name;
    std::ifstream f(path, std::ios::binary | std::ios::ate);
    if (!f) return EngineError("leveldb", "cannot open table " + path);
    const uint64_t size = static_cast<uint64_t>(f.tellg());
    out->table_bytes += size;
    Status err = AddTableBlocks(path, meta_key, &stats);
    FilterTable t;
    t.level = levels[i];
    if (err.ok()) err = CountEntries(path, size, &t.keys);
    if (!err.ok()) return err;
    out->shape.push_back(t);
  }
  out->index_bytes = stats.index_bytes;
  out->filter_block_bytes = stats.block_bytes;
  out->filter_bytes = stats.filter_bytes;
  out->num_filters = stats.num_filters;
  // Table::Open keeps the filter block as read (from mmap or a heap copy).
  out->filter_memory_bytes = static_cast<int64_t>(stats.contents);
  out->notes.push_back("filter memory = filter blocks as read by Table::Open");
  return Status::OK();
}

}  // namespace

std::unique_ptr<Engine> NewLevelDBEngine() {
  return std::make_unique<LevelDBEngine>();
}

}  // namespace compare
}  // namespace sstfilter
