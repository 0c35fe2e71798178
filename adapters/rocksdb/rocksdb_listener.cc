// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The level listener: tells a by_level policy's sizer the key counts of
// its column family's runs whenever a flush or compaction starts, as they
// will be when that job and those still running end (docs/LEVEL_SIZING.md,
// "The tree's real shape"):
//
//   every live file, by level (each L0 file its own run), its keys being
//   SstFileMetaData::num_entries (or, for a file whose properties RocksDB
//   has not loaded yet, its bytes times the tree's entries per byte);
//   read from RocksDB's metadata, then kept from the events of flushes
//   and compactions while RocksDB's counts of files per level and of
//   their bytes agree (the default column family's: another's files are
//   read at every job, since only the default one's counts can be asked
//   for by name);
//   minus the input files of every running compaction, whose keys are
//   counted at its output level instead (one new run if that is L0, as
//   under universal compaction, the last started of which is marked:
//   TreeRuns::l0_output; the deepest level a manual compaction writes:
//   TreeRuns::manual_level);
//   the keys of a flush: those of the last flush this listener saw end
//   (or of the mean L0 file; unknown if neither is known), and for a
//   flush, one new L0 file of them;
//   with the filter entries and bits of the files that stay, for those
//   this listener saw created (OnTableFileCreated).
//
// RocksDB calls listeners on the thread of the job, before the job builds
// its first table and without holding the DB mutex, so the plan is in
// place for every table of the job. CompactFiles (7.x to 11.x) notifies no
// listener: its tables get the last plan (for a listener made in code, the
// model until the listener has seen a job of the database).

#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/listener.h>
#include <rocksdb/metadata.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "adapters/rocksdb/rocksdb_level.h"
#include "sstfilter/rocksdb.h"

namespace sstfilter {
namespace {

// A live file as RocksDB or this listener's events describe it.
struct FileRecord {
  int level;
  uint64_t keys;   // 0: not known yet
  uint64_t bytes;  // its size
};
using FileRecords = std::map<uint64_t, FileRecord>;  // by file number

// RocksDB's description of the files of column family `name`.
FileRecords ReadFiles(rocksdb::DB* db, const std::string& name) {
  std::vector<rocksdb::ColumnFamilyMetaData> all;
  db->GetAllColumnFamilyMetaData(&all);
  FileRecords out;
  for (const rocksdb::ColumnFamilyMetaData& cf : all) {
    if (cf.name != name) continue;
    for (const rocksdb::LevelMetaData& l : cf.levels) {
      for (const rocksdb::SstFileMetaData& f : l.files) {
        out[f.file_number] = {l.level, f.num_entries, f.size};
      }
    }
  }
  return out;
}

// The number of files at each level of `db`'s default column family and
// their bytes, from RocksDB's properties (cheap: no file is described).
struct TreeCounts {
  std::vector<uint64_t> files;  // by level; empty: not known
  uint64_t bytes = 0;
};
TreeCounts DefaultTreeCounts(rocksdb::DB* db) {
  TreeCounts out;
  const int levels = db->NumberLevels();
  for (int l = 0; l < levels; l++) {
    std::string v;
    if (!db->GetProperty("rocksdb.num-files-at-level" + std::to_string(l),
                         &v)) {
      return {};
    }
    out.files.push_back(std::strtoull(v.c_str(), nullptr, 10));
  }
  if (!db->GetIntProperty(rocksdb::DB::Properties::kLiveSstFilesSize,
                          &out.bytes)) {
    return {};
  }
  return out;
}

// The number of table file "<dir>/000123.sst"; 0 if none.
uint64_t FileNumber(const std::string& path) {
  const size_t name = path.find_last_of('/') + 1;  // npos + 1 == 0
  return std::strtoull(path.c_str() + name, nullptr, 10);
}

// What one listener knows of one column family's live files, running jobs
// and built filters, and the tree it derives from them. Thread-safe.
class TreeTracker {
 public:
  void FlushCompleted(const rocksdb::FlushJobInfo& info) {
    std::lock_guard<std::mutex> lock(mu_);
    last_flush_keys_ = info.table_properties.num_entries;
    Install({}, {{0, FileNumber(info.file_path)}});
  }

  void TableCreated(const rocksdb::TableFileCreationInfo& info) {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t number = FileNumber(info.file_path);
    const internal::BuiltFilter filter{
        info.table_properties.num_filter_entries,
        8.0 * static_cast<double>(info.table_properties.filter_size)};
    made_[number] = {filter, info.table_properties.num_entries, info.file_size};
    // Already read from RocksDB's metadata (its job ended first).
    Live* live = FindLive(number);
    if (live != nullptr) {
      live->has_filter = true;
      live->filter = filter;
    }
  }

  void TableDeleted(const std::string& path) {
    std::lock_guard<std::mutex> lock(mu_);
    made_.erase(FileNumber(path));
    Remove(FileNumber(path));
  }

  void CompactionBegins(const rocksdb::CompactionJobInfo& info) {
    Job job{
        {},
        info.output_level,
        info.compaction_reason == rocksdb::CompactionReason::kManualCompaction};
    for (const rocksdb::CompactionFileInfo& f : info.input_file_infos) {
      job.inputs.push_back(f.file_number);
    }
    std::lock_guard<std::mutex> lock(mu_);
    jobs_[info.job_id] = std::move(job);
  }

  void CompactionEnds(const rocksdb::CompactionJobInfo& info) {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.erase(info.job_id);
    if (!info.status.ok()) return;
    std::vector<uint64_t> inputs;
    std::vector<std::pair<int, uint64_t>> outputs;
    for (const rocksdb::CompactionFileInfo& f : info.input_file_infos) {
      inputs.push_back(f.file_number);
    }
    for (const rocksdb::CompactionFileInfo& f : info.output_file_infos) {
      outputs.push_back({f.level, f.file_number});
    }
    Install(inputs, outputs);
  }

  // The tree of column family `cf` of `db` as it will be when the running
  // jobs end, told to `sizer` (LevelSizer::Observe's arguments), for a
  // flush or compaction starting now. The live files are those of the
  // last reading of RocksDB's metadata and the events since, while
  // RocksDB's count of files at every level and of their bytes agree
  // (only the default column family's can be read by name); else read
  // again. They differ when a job has ended but its event has not come
  // yet, and after what sends no event (CompactFiles, IngestExternalFile,
  // a reopen). Reading the counts costs little; the metadata describes
  // every file.
  template <typename Sizer>
  void Observe(rocksdb::DB* db, const std::string& cf, bool flush,
               Sizer* sizer) {
    const TreeCounts counts = cf == rocksdb::kDefaultColumnFamilyName
                                  ? DefaultTreeCounts(db)
                                  : TreeCounts();
    internal::TreeRuns tree;
    uint64_t flush_keys = 0;
    bool current = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      current = !counts.files.empty() && files_known_ && files_db_ == db &&
                SameCounts(counts);
      if (current) {
        tree = TreeAfterJobs();
        flush_keys = FlushKeys(tree);
      }
    }
    if (!current) {
      FileRecords files = ReadFiles(db, cf);
      std::lock_guard<std::mutex> lock(mu_);
      Reset(files);
      files_known_ = !counts.files.empty();
      files_db_ = db;
      tree = TreeAfterJobs();
      flush_keys = FlushKeys(tree);
    }
    sizer->Observe(tree, flush ? flush_keys : 0, flush_keys);
  }

 private:
  // A table file this listener saw created: its filter, keys and size.
  struct Made {
    internal::BuiltFilter filter;
    uint64_t keys;
    uint64_t bytes;
  };

  // A live file, with its filter if this listener saw it built.
  struct Live {
    FileRecord record;
    bool has_filter = false;
    internal::BuiltFilter filter{0, 0};
  };

  // REQUIRES: mu_ held. files_ becomes `files`, with the filters of made_.
  void Reset(const FileRecords& files) {
    files_.clear();
    level_files_.clear();
    live_bytes_ = known_keys_ = known_bytes_ = 0;
    for (const auto& [number, record] : files) Add(number, record);
  }

  // REQUIRES: mu_ held. File `number` joins files_ (or moves in it).
  void Add(uint64_t number, const FileRecord& record) {
    Remove(number);
    Live live{record};
    const auto made = made_.find(number);
    if (made != made_.end()) {
      live.has_filter = true;
      live.filter = made->second.filter;
    }
    files_.insert(LowerBound(number), {number, live});
    if (record.level >= 0) {
      const size_t l = static_cast<size_t>(record.level);
      if (level_files_.size() <= l) level_files_.resize(l + 1, 0);
      level_files_[l]++;
    } else {
      bad_levels_++;
    }
    live_bytes_ += record.bytes;
    if (record.keys > 0) {
      known_keys_ += record.keys;
      known_bytes_ += record.bytes;
    }
  }

  // REQUIRES: mu_ held. Where file `number` is or would go in files_.
  std::vector<std::pair<uint64_t, Live>>::iterator LowerBound(uint64_t number) {
    return std::lower_bound(
        files_.begin(), files_.end(), number,
        [](const auto& f, uint64_t n) { return f.first < n; });
  }

  // REQUIRES: mu_ held. File `number` of files_; nullptr if none.
  Live* FindLive(uint64_t number) {
    const auto it = LowerBound(number);
    return it != files_.end() && it->first == number ? &it->second : nullptr;
  }

  // REQUIRES: mu_ held. File `number` leaves files_, if there.
  void Remove(uint64_t number) {
    const auto it = LowerBound(number);
    if (it == files_.end() || it->first != number) return;
    const FileRecord& r = it->second.record;
    if (r.level >= 0) {
      level_files_[static_cast<size_t>(r.level)]--;
    } else {
      bad_levels_--;
    }
    live_bytes_ -= r.bytes;
    if (r.keys > 0) {
      known_keys_ -= r.keys;
      known_bytes_ -= r.bytes;
    }
    files_.erase(it);
  }

  // REQUIRES: mu_ held. A flush or compaction installed: `removed` left
  // the tree, `added` (level, number) joined it. If a new file's keys are
  // unknown, files_ is read from RocksDB again at the next job.
  void Install(const std::vector<uint64_t>& removed,
               const std::vector<std::pair<int, uint64_t>>& added) {
    if (!files_known_) return;
    std::vector<std::pair<uint64_t, FileRecord>> joined;
    for (const auto& [level, number] : added) {
      const Live* live = FindLive(number);  // moved to another level
      const auto made = made_.find(number);
      if (live != nullptr) {
        joined.push_back(
            {number, {level, live->record.keys, live->record.bytes}});
      } else if (made != made_.end()) {
        joined.push_back(
            {number, {level, made->second.keys, made->second.bytes}});
      } else {
        files_known_ = false;
        return;
      }
    }
    for (uint64_t number : removed) Remove(number);
    for (const auto& [number, record] : joined) Add(number, record);
  }

  // REQUIRES: mu_ held. Whether files_ has as many files at each level
  // and as many bytes as `counts`.
  bool SameCounts(const TreeCounts& counts) const {
    if (bad_levels_ != 0 || live_bytes_ != counts.bytes) return false;
    for (size_t l = 0; l < std::max(counts.files.size(), level_files_.size());
         l++) {
      const uint64_t n = l < level_files_.size() ? level_files_[l] : 0;
      if (n != (l < counts.files.size() ? counts.files[l] : 0)) return false;
    }
    return true;
  }

  // A running compaction: the files it reads, and the level it writes.
  struct Job {
    std::vector<uint64_t> inputs;
    int output_level;
    bool manual;  // CompactRange's
  };

  // REQUIRES: mu_ held. The runs of files_ once the running jobs end: the
  // L0 files newest first, as RocksDB lists them, then the levels. After
  // a reopen RocksDB loads the properties of a few files per new version:
  // the others' keys are estimated from their sizes, at the entries per
  // byte of the files whose keys are known.
  internal::TreeRuns TreeAfterJobs() {
    // The running jobs' inputs, by file number (the first job by id).
    std::vector<std::pair<uint64_t, int>> reading;
    for (const auto& [id, job] : jobs_) {
      for (uint64_t number : job.inputs) reading.push_back({number, id});
    }
    std::sort(reading.begin(), reading.end());
    const auto job_reading = [&](uint64_t number) {
      const auto it = std::lower_bound(reading.begin(), reading.end(),
                                       std::make_pair(number, INT_MIN));
      return it != reading.end() && it->first == number ? it->second : -1;
    };
    const double entries = static_cast<double>(known_keys_);
    const double bytes = static_cast<double>(known_bytes_);
    internal::TreeRuns tree;
    std::map<int, uint64_t> moving;  // job id -> keys of its live inputs
    const auto add = [&](uint64_t number, const Live& f) {
      uint64_t keys = f.record.keys;
      if (keys == 0 && bytes > 0) {
        keys = static_cast<uint64_t>(static_cast<double>(f.record.bytes) *
                                     entries / bytes);
      }
      const int job = reading.empty() ? -1 : job_reading(number);
      if (job >= 0) {
        moving[job] += keys;
      } else if (f.record.level == 0) {
        tree.l0_files.push_back({keys, {}});
        if (f.has_filter) tree.l0_files.back().built.push_back(f.filter);
      } else {
        internal::RunKeys& run = LevelRun(&tree, f.record.level);
        run.keys += keys;
        if (f.has_filter) run.built.push_back(f.filter);
      }
    };
    for (auto it = files_.rbegin(); it != files_.rend(); ++it) {
      if (it->second.record.level == 0) add(it->first, it->second);
    }
    for (const auto& [number, f] : files_) {
      if (f.record.level != 0) add(number, f);
    }
    for (auto it = jobs_.begin(); it != jobs_.end();) {
      // A job none of whose inputs are live has ended (its outputs are
      // among the files) though its completion has not been heard.
      if (moving.count(it->first) == 0) {
        it = jobs_.erase(it);
        continue;
      }
      const uint64_t keys = moving[it->first];
      if (it->second.output_level == 0) {
        // Jobs by id, so the last started: the job of a table at L0.
        tree.l0_output = static_cast<int>(tree.l0_files.size());
        tree.l0_files.push_back({keys, {}});
      } else {
        LevelRun(&tree, it->second.output_level).keys += keys;
        if (it->second.manual) {
          tree.manual_level =
              std::max(tree.manual_level, it->second.output_level);
        }
      }
      ++it;
    }
    return tree;
  }

  // Level `level`'s run of `tree` (level >= 1), added if missing.
  static internal::RunKeys& LevelRun(internal::TreeRuns* tree, int level) {
    const size_t l = static_cast<size_t>(level);
    if (tree->levels.size() <= l) tree->levels.resize(l + 1);
    return tree->levels[l];
  }

  // REQUIRES: mu_ held. The keys a flush starting now will write.
  uint64_t FlushKeys(const internal::TreeRuns& tree) const {
    if (last_flush_keys_ > 0 || tree.l0_files.empty()) return last_flush_keys_;
    uint64_t sum = 0;
    for (const internal::RunKeys& f : tree.l0_files) sum += f.keys;
    return sum / tree.l0_files.size();
  }

  std::mutex mu_;
  std::map<int, Job> jobs_;  // running compactions by job id
  // The files created since the listener was added, until RocksDB deletes
  // them. (Not pruned to the live files: a running job's output may be
  // older than a flush's live file, and not live yet.)
  std::map<uint64_t, Made> made_;
  // The live files as of the last reading of RocksDB's metadata and the
  // events since; trusted while files_known_, for database files_db_ and
  // while RocksDB's counts agree (Observe), by file number (a vector: the
  // tree is read from them at every job, and a few change). With their
  // number per level, their bytes, and the keys and bytes of those whose
  // keys are known.
  std::vector<std::pair<uint64_t, Live>> files_;
  std::vector<uint64_t> level_files_;
  uint64_t bad_levels_ = 0;  // files at a level < 0 (none from RocksDB)
  uint64_t live_bytes_ = 0;
  uint64_t known_keys_ = 0;
  uint64_t known_bytes_ = 0;
  bool files_known_ = false;
  const rocksdb::DB* files_db_ = nullptr;
  uint64_t last_flush_keys_ = 0;
};

// The open databases a listener has written its line to, by info log.
class LoggedDatabases {
 public:
  // Whether `info_log` is new here (it is then remembered).
  bool First(const std::shared_ptr<rocksdb::Logger>& info_log) {
    std::lock_guard<std::mutex> lock(mu_);
    seen_.erase(
        std::remove_if(seen_.begin(), seen_.end(),
                       [](const Seen& s) { return s.info_log.expired(); }),
        seen_.end());
    for (const Seen& s : seen_) {
      if (s.log == info_log.get()) return false;
    }
    seen_.push_back({info_log, info_log.get()});
    return true;
  }

 private:
  struct Seen {
    std::weak_ptr<rocksdb::Logger> info_log;  // expired: the DB is closed
    const rocksdb::Logger* log;               // its address, to compare
  };
  std::mutex mu_;
  std::vector<Seen> seen_;
};

// Both listeners: each event of a column family goes to its tracker, and
// the tree at each job's start to its sizers (Publish). At the start of a
// database's first flush or compaction a listener writes to its info LOG
// that it is attached (RocksDB tells a listener of no earlier moment).
class LevelListenerBase : public rocksdb::EventListener {
 public:
  // The id of the listener in OPTIONS files (kLevelListenerId), also for
  // one made in code: an OPTIONS file RocksDB writes for a database with
  // it loads the one of the OPTIONS file.
  const char* Name() const override { return kLevelListenerId; }

  void OnFlushBegin(rocksdb::DB* db,
                    const rocksdb::FlushJobInfo& info) override {
    Attach(db, info.cf_name);
    TreeTracker* t = Tracker(db->GetName(), info.cf_name);
    if (t != nullptr) Publish(db, info.cf_name, t, /*flush=*/true);
  }

  void OnFlushCompleted(rocksdb::DB* db,
                        const rocksdb::FlushJobInfo& info) override {
    TreeTracker* t = Tracker(db->GetName(), info.cf_name);
    if (t != nullptr) t->FlushCompleted(info);
  }

  void OnTableFileCreated(const rocksdb::TableFileCreationInfo& info) override {
    TreeTracker* t = Tracker(info.db_name, info.cf_name);
    if (t != nullptr && info.status.ok()) t->TableCreated(info);
  }

  // File numbers are unique in a database, which is all RocksDB names.
  void OnTableFileDeleted(const rocksdb::TableFileDeletionInfo& info) override {
    for (TreeTracker* t : TrackersOf(info.db_name)) {
      t->TableDeleted(info.file_path);
    }
  }

  void OnCompactionBegin(rocksdb::DB* db,
                         const rocksdb::CompactionJobInfo& info) override {
    Attach(db, info.cf_name);
    TreeTracker* t = Tracker(db->GetName(), info.cf_name);
    if (t == nullptr) return;
    t->CompactionBegins(info);
    Publish(db, info.cf_name, t, /*flush=*/false);
  }

  void OnCompactionCompleted(rocksdb::DB* db,
                             const rocksdb::CompactionJobInfo& info) override {
    TreeTracker* t = Tracker(db->GetName(), info.cf_name);
    if (t != nullptr) t->CompactionEnds(info);
  }

 protected:
  // A flush or compaction of column family `cf` of the database logging to
  // `info_log` begins.
  virtual void JobBegins(const std::shared_ptr<rocksdb::Logger>& info_log,
                         const std::string& cf) = 0;
  // Whether this listener has yet to write its line to `info_log`.
  bool FirstTime(const std::shared_ptr<rocksdb::Logger>& info_log) {
    return info_log != nullptr && logged_.First(info_log);
  }
  // The tracker of column family `cf` of database `db_name`; nullptr if
  // this listener does not follow it. Lives as long as the listener.
  virtual TreeTracker* Tracker(const std::string& db_name,
                               const std::string& cf) = 0;
  // The trackers of every column family of database `db_name`.
  virtual std::vector<TreeTracker*> TrackersOf(const std::string& db_name) = 0;
  virtual void Publish(rocksdb::DB* db, const std::string& cf,
                       TreeTracker* tracker, bool flush) = 0;

 private:
  void Attach(rocksdb::DB* db, const std::string& cf) {
    JobBegins(InfoLog(db), cf);
  }

  // The info log of `db`, remembered by database and session (a reopened
  // database has a new one): copying its DBOptions to find it takes some
  // 15 us, at every job.
  std::shared_ptr<rocksdb::Logger> InfoLog(rocksdb::DB* db) {
    std::string session;
    if (!db->GetDbSessionId(session).ok()) return db->GetDBOptions().info_log;
    {
      std::lock_guard<std::mutex> lock(logs_mu_);
      for (const OpenLog& l : logs_) {
        if (l.db != db || l.session != session) continue;
        std::shared_ptr<rocksdb::Logger> log = l.info_log.lock();
        if (log != nullptr) return log;
      }
    }
    std::shared_ptr<rocksdb::Logger> log = db->GetDBOptions().info_log;
    std::lock_guard<std::mutex> lock(logs_mu_);
    logs_.erase(std::remove_if(logs_.begin(), logs_.end(),
                               [&](const OpenLog& l) {
                                 return l.db == db || l.info_log.expired();
                               }),
                logs_.end());
    logs_.push_back({db, session, log});
    return log;
  }

  struct OpenLog {
    const rocksdb::DB* db;
    std::string session;
    std::weak_ptr<rocksdb::Logger> info_log;  // expired: the DB is closed
  };
  LoggedDatabases logged_;
  std::mutex logs_mu_;
  std::vector<OpenLog> logs_;  // one per open database this listener saw
};

// Made in code for one policy and one column family: tells that policy's
// own sizer.
class BoundLevelListener final : public LevelListenerBase {
 public:
  BoundLevelListener(std::shared_ptr<const rocksdb::FilterPolicy> policy,
                     internal::LevelSizer* sizer, std::string column_family)
      : policy_(std::move(policy)),
        sizer_(sizer),
        column_family_(std::move(column_family)) {}

 private:
  void JobBegins(const std::shared_ptr<rocksdb::Logger>& info_log,
                 const std::string& cf) override {
    // Before the job builds a table: the policy then knows this database
    // carries its listener.
    if (cf == column_family_) sizer_->NoteFollowed(info_log, cf);
    if (FirstTime(info_log)) {
      rocksdb::Log(rocksdb::InfoLogLevel::INFO_LEVEL, info_log.get(),
                   "[sstfilter] the level listener (%s) made in code for "
                   "%s is attached to this database: it reports the tree "
                   "of column family \"%s\" to that policy",
                   kLevelListenerId, policy_->GetId().c_str(),
                   column_family_.c_str());
    }
  }

  TreeTracker* Tracker(const std::string& /*db_name*/,
                       const std::string& cf) override {
    return cf == column_family_ ? &tracker_ : nullptr;
  }

  std::vector<TreeTracker*> TrackersOf(
      const std::string& /*db_name*/) override {
    return {&tracker_};
  }

  void Publish(rocksdb::DB* db, const std::string& cf, TreeTracker* tracker,
               bool flush) override {
    // A uniform spec's sizer plans nothing: the tree is not read for it.
    if (sizer_->Plans()) tracker->Observe(db, cf, flush, sizer_);
  }

  // Keeps the sizer alive.
  const std::shared_ptr<const rocksdb::FilterPolicy> policy_;
  internal::LevelSizer* const sizer_;
  const std::string column_family_;
  TreeTracker tracker_;
};

// Made from an OPTIONS file or option string (kLevelListenerId): follows
// every column family of the databases it is added to, and tells the
// sizers of the policies building their tables through their channels
// (internal::TreeChannel).
class OptionsLevelListener final : public LevelListenerBase {
 private:
  void JobBegins(const std::shared_ptr<rocksdb::Logger>& info_log,
                 const std::string& /*cf*/) override {
    if (FirstTime(info_log)) {
      rocksdb::Log(rocksdb::InfoLogLevel::INFO_LEVEL, info_log.get(),
                   "[sstfilter] the level listener (%s) is attached to this "
                   "database: it reports the tree of each column family to "
                   "the by_level policies building its tables",
                   kLevelListenerId);
    }
  }

  TreeTracker* Tracker(const std::string& db_name,
                       const std::string& cf) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::unique_ptr<TreeTracker>& t = trackers_[{db_name, cf}];
    if (t == nullptr) t = std::make_unique<TreeTracker>();
    return t.get();
  }

  std::vector<TreeTracker*> TrackersOf(const std::string& db_name) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<TreeTracker*> out;
    for (auto it = trackers_.lower_bound({db_name, ""});
         it != trackers_.end() && it->first.first == db_name; ++it) {
      out.push_back(it->second.get());
    }
    return out;
  }

  void Publish(rocksdb::DB* db, const std::string& cf, TreeTracker* tracker,
               bool flush) override {
    std::shared_ptr<internal::TreeChannel> channel =
        internal::ListenedTreeChannel(db, cf);
    tracker->Observe(db, cf, flush, channel.get());
  }

  std::mutex mu_;
  // By database name and column family; never erased (a few per database).
  std::map<std::pair<std::string, std::string>, std::unique_ptr<TreeTracker>>
      trackers_;
};

}  // namespace

rocksdb::Status NewRocksDBLevelListener(
    const std::shared_ptr<const rocksdb::FilterPolicy>& policy,
    std::shared_ptr<rocksdb::EventListener>* out,
    const std::string& column_family) {
  internal::LevelSizer* sizer = internal::LevelSizerOf(policy.get());
  if (sizer == nullptr) {
    return rocksdb::Status::InvalidArgument(
        std::string("sstfilter: NewRocksDBLevelListener needs a policy made "
                    "by sstfilter::NewRocksDBFilterPolicy (or an sstfilter.* "
                    "id) in this library, not ") +
        (policy ? "\"" + policy->GetId() + "\"" : std::string("null")));
  }
  sizer->MarkBound();
  *out = std::make_shared<BoundLevelListener>(policy, sizer, column_family);
  return rocksdb::Status::OK();
}

namespace internal {

int RegisterLevelListener(rocksdb::ObjectLibrary& library) {
  library.AddFactory<rocksdb::EventListener>(
      kLevelListenerId,
      [](const std::string& /*uri*/,
         std::unique_ptr<rocksdb::EventListener>* guard,
         std::string* /*errmsg*/) -> rocksdb::EventListener* {
        guard->reset(new OptionsLevelListener);
        return guard->get();
      });
  return 1;
}

}  // namespace internal

}  // namespace sstfilter
