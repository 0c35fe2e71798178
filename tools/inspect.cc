// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// `sstfilter inspect`: what filter a RocksDB SST file (read from its table
// properties through rocksdb::SstFileReader) or a LevelDB table (.ldb, read
// from its bytes, tools/leveldb_table.h) carries, at which level of its
// database the file is, and whether an sstfilter policy can use it.
//
// RocksDB records the writing policy's Name() in the property
// filter_policy_name ("" when the file has no filter). sstfilter's policies
// are named "sstfilter.<kind>" and store every kind's filter under the one
// family name kFamilyName ("sstfilter.v1", RocksDB's CompatibilityName()),
// so any sstfilter policy reads a file whose policy name starts with
// "sstfilter." -- unless its filters are keyed (sstfilter/secret.h): those
// only a policy given the writer's secret uses. inspect reads the filters'
// trailers to tell (their key id says which secret; the secret itself is
// never in a file).

#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "policy/format.h"
#include "sstfilter/filter.h"
#include "sstfilter/range.h"
#include "sstfilter/spec.h"
#include "tools/commands.h"
#include "tools/leveldb_table.h"

#if SSTFILTER_TOOL_WITH_LEVELDB
#include <leveldb/env.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/table.h>
#endif

#if SSTFILTER_TOOL_WITH_ROCKSDB
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/metadata.h>
#include <rocksdb/options.h>
#include <rocksdb/sst_file_reader.h>
#include <rocksdb/table.h>
#include <rocksdb/table_properties.h>
#include <rocksdb/version.h>

#include "adapters/rocksdb/rocksdb_compat.h"
#endif

namespace sstfilter {
namespace tool {
namespace {

[[maybe_unused]] std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

[[maybe_unused]] std::string DirName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// What the filters of a table say about themselves: their kinds, and the
// key ids of those that are keyed.
class FilterSummary {
 public:
  void Add(std::string_view filter) {
    filters_++;
    internal::Trailer t;
    if (internal::ParseTrailer(reinterpret_cast<const uint8_t*>(filter.data()),
                               filter.size(), &t) &&
        t.keyed) {
      key_ids_.insert(t.key_id);
      kinds_[std::string(FilterKindName(t.kind)) + " (keyed)"]++;
      return;
    }
    const FilterReader r = FilterReader::Open(filter);
    kinds_[r.valid() ? FilterKindName(r.kind()) : "unreadable"]++;
  }

  uint64_t filters() const { return filters_; }
  const std::set<uint32_t>& key_ids() const { return key_ids_; }

  // "bloom x 3, cuckoo (keyed) x 1, unreadable x 2".
  std::string KindCounts() const {
    std::string out;
    for (const auto& [name, n] : kinds_) {
      if (!out.empty()) out += ", ";
      out += name + " x " + std::to_string(n);
    }
    return out;
  }

 private:
  uint64_t filters_ = 0;
  std::map<std::string, uint64_t> kinds_;
  std::set<uint32_t> key_ids_;
};

// Whether a DB opened with an sstfilter policy uses this file's filter.
// `what`: "this file" or "this table"; `drop`: how the engine drops it;
// `summary`: the filters read, or nullptr if they could not be.
void PrintVerdict(bool ours, const std::string& policy,
                  const FilterSummary* summary, const char* what,
                  const char* drop) {
  if (!ours) {
    std::printf(
        "  sstfilter:         no: \"%s\" is not an sstfilter policy. A DB "
        "opened with\n"
        "                     an sstfilter policy reads %s correctly but "
        "without\n"
        "                     a filter%s until compaction rewrites it.\n",
        policy.c_str(), what, drop);
    return;
  }
  if (summary != nullptr && !summary->key_ids().empty()) {
    std::string ids;
    for (uint32_t id : summary->key_ids()) {
      ids += (ids.empty() ? "" : ", ") + std::to_string(id);
    }
    std::printf(
        "  keyed:             yes, key id%s %s: hashed with the application's "
        "secret\n"
        "  sstfilter:         only with that secret: an sstfilter policy given "
        "the\n"
        "                     secret of key id %s (FilterSecret::key_id(),\n"
        "                     sstfilter/secret.h) uses the filter; any other "
        "policy,\n"
        "                     with another secret or none, reads every key as "
        "\"may\n"
        "                     match\": %s reads correctly, without the "
        "filter\n",
        summary->key_ids().size() > 1 ? "s" : "", ids.c_str(), ids.c_str(),
        what);
    return;
  }
  if (summary != nullptr) {
    std::printf("  keyed:             no\n");
  }
  std::printf(
      "  sstfilter:         yes: family %s; any sstfilter policy reads it, "
      "whatever\n"
      "                     its kind or size%s\n",
      kFamilyName, summary != nullptr ? "" : " (unless it is keyed: not read)");
}

// Keys of a LevelDB table, counted by iterating it; -1 if unknown.
int64_t CountLevelDBKeys(const std::string& path) {
#if SSTFILTER_TOOL_WITH_LEVELDB
  leveldb::Env* env = leveldb::Env::Default();
  uint64_t size = 0;
  leveldb::RandomAccessFile* file = nullptr;
  if (!env->GetFileSize(path, &size).ok() ||
      !env->NewRandomAccessFile(path, &file).ok()) {
    return -1;
  }
  std::unique_ptr<leveldb::RandomAccessFile> owned(file);
  leveldb::Options options;  // no filter policy: the filter is not read
  leveldb::Table* raw = nullptr;
  if (!leveldb::Table::Open(options, file, size, &raw).ok()) return -1;
  std::unique_ptr<leveldb::Table> table(raw);
  std::unique_ptr<leveldb::Iterator> it(
      table->NewIterator(leveldb::ReadOptions()));
  int64_t n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
  return it->status().ok() ? n : -1;
#else
  (void)path;
  return -1;
#endif
}

// The LevelDB policies name themselves kFamilyName; LevelDB stores filters
// under "filter." + Name() and hands them only to a policy of that name.
bool InspectLevelDBTable(const std::string& path) {
  LevelDBFilterBlock block;
  const Status s = ReadLevelDBFilterBlock(path, &block);
  if (!s.ok()) {
    std::fprintf(stderr, "sstfilter: %s\n", s.message().c_str());
    return false;
  }
  const int64_t keys = CountLevelDBKeys(path);
  std::printf("%s\n", path.c_str());
  std::printf("  format:            LevelDB table\n");
  if (keys >= 0) {
    std::printf("  entries:           %lld\n", static_cast<long long>(keys));
  }
  std::printf(
      "  level:             unknown (LevelDB keeps it in the MANIFEST only)\n");
  if (block.policy_name.empty()) {
    std::printf(
        "  filter:            NONE: this table carries no filter, so every "
        "lookup that\n"
        "                     reaches it reads a data block. LevelDB writes "
        "no filter\n"
        "                     when the DB is opened without a filter "
        "policy.\n");
    std::printf("  sstfilter:         nothing to read\n");
    return true;
  }
  uint64_t filter_bytes = 0;
  for (const std::string& f : block.filters) filter_bytes += f.size();
  std::printf("  filter policy:     %s\n", block.policy_name.c_str());
  std::printf("  filter size:       %llu bytes in %zu filters\n",
              static_cast<unsigned long long>(block.block_bytes),
              block.filters.size());
  if (keys > 0) {
    // LevelDB's own figure: the whole block (offsets included) per key.
    std::printf("  bits per key:      %.2f\n",
                8.0 * static_cast<double>(block.block_bytes) /
                    static_cast<double>(keys));
  }
  FilterSummary summary;
  if (block.policy_name == kFamilyName) {
    for (const std::string& f : block.filters) summary.Add(f);
    std::printf("  filter kinds:      %s\n", summary.KindCounts().c_str());
  }
  PrintVerdict(block.policy_name == kFamilyName, block.policy_name, &summary,
               "this table", " (LevelDB drops it silently)");
  return true;
}

}  // namespace
}  // namespace tool
}  // namespace sstfilter

#if SSTFILTER_TOOL_WITH_ROCKSDB

namespace sstfilter {
namespace tool {
namespace {

// The level of each live file of the RocksDB databases files are in, by
// opening each directory read-only once (which changes nothing on disk).
class Levels {
 public:
  // The file's level, or -1 if its directory is no readable database or
  // the file is not one of its live files.
  int Of(const std::string& path) {
    const std::string dir = DirName(path);
    auto it = dirs_.find(dir);
    if (it == dirs_.end()) it = dirs_.emplace(dir, Load(dir)).first;
    auto f = it->second.find(BaseName(path));
    return f == it->second.end() ? -1 : f->second;
  }

 private:
  static std::map<std::string, int> Load(const std::string& dir) {
    std::map<std::string, int> out;
    rocksdb::Options options;
    options.info_log_level = rocksdb::InfoLogLevel::HEADER_LEVEL;
    options.max_open_files = 16;  // do not open every table
    std::unique_ptr<rocksdb::DB> db;
    if (!OpenInto(&db, [&](auto* out_db) {
           return rocksdb::DB::OpenForReadOnly(options, dir, out_db);
         }).ok()) {
      return out;
    }
    std::vector<rocksdb::LiveFileMetaData> files;
    db->GetLiveFilesMetaData(&files);
    for (const rocksdb::LiveFileMetaData& f : files) {
      out[BaseName(f.name)] = f.level;
    }
    return out;
  }

  std::map<std::string, std::map<std::string, int>> dirs_;
};

// A policy that only reads: RocksDB hands it each filter block of a table
// it opens (with SstFileReader: the full filter, or every partition), and
// it adds the block to a FilterSummary instead of making a reader. A null
// reader is what RocksDB keeps for an empty filter: it is never queried.
class FilterCollector final : public rocksdb::FilterPolicy {
 public:
  // `name`: the writer's Name(), from the table's properties.
  explicit FilterCollector(std::string name) : name_(std::move(name)) {}

  const char* Name() const override { return name_.c_str(); }
#if ROCKSDB_MAJOR * 10000 + ROCKSDB_MINOR * 100 + ROCKSDB_PATCH >= 70003
  // The name RocksDB stores sstfilter filters under (before 7.0.3: Name()).
  const char* CompatibilityName() const override { return kFamilyName; }
#endif
  rocksdb::FilterBitsBuilder* GetBuilderWithContext(
      const rocksdb::FilterBuildingContext&) const override {
    return nullptr;  // builds nothing
  }
  rocksdb::FilterBitsReader* GetFilterBitsReader(
      const rocksdb::Slice& contents) const override {
    std::lock_guard<std::mutex> lock(mu_);
    summary_.Add(std::string_view(contents.data(), contents.size()));
    return nullptr;
  }

  FilterSummary summary() const {
    std::lock_guard<std::mutex> lock(mu_);
    return summary_;
  }

 private:
  const std::string name_;
  mutable std::mutex mu_;
  mutable FilterSummary summary_;
};

// The filters of the SST at `path` written by sstfilter policy `name`, as
// RocksDB loads them; false if it loaded none.
bool ReadSstFilters(const std::string& path, const std::string& name,
                    FilterSummary* out) {
  auto collector = std::make_shared<FilterCollector>(name);
  rocksdb::Options options;
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy = collector;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  {
    rocksdb::SstFileReader reader(options);
    if (!reader.Open(path).ok()) return false;
  }
  *out = collector->summary();
  return out->filters() > 0;
}

bool IsSstfilterPolicy(const std::string& name) {
  return name == kFamilyName || name.rfind(kPolicyPrefix, 0) == 0;
}

// The range filter the table's properties carry (sstfilter/range.h), if
// any: scans skip the table where it says no key lies in their range.
void PrintRangeFilter(const rocksdb::TableProperties& p) {
  const auto it = p.user_collected_properties.find(kRangePropertyName);
  if (it == p.user_collected_properties.end()) return;
  const RangeFilterReader r = RangeFilterReader::Open(it->second);
  if (!r.valid()) {
    std::printf("  range filter:      unreadable (%zu bytes): never skipped\n",
                it->second.size());
    return;
  }
  std::printf(
      "  range filter:      %zu bytes, %llu hashes, segment offset %u len %u, "
      "%.2f bits per key\n",
      it->second.size(), static_cast<unsigned long long>(r.num_entries()),
      r.offset(), r.len(),
      p.num_entries > 0 ? 8.0 * static_cast<double>(it->second.size()) /
                              static_cast<double>(p.num_entries)
                        : 0.0);
}

// Prints one file's report; false if it cannot be read as an SST.
bool InspectFile(const std::string& path, Levels* levels) {
  if (IsLevelDBTable(path)) return InspectLevelDBTable(path);
  rocksdb::Options options;
  rocksdb::SstFileReader reader(options);
  rocksdb::Status s = reader.Open(path);
  if (!s.ok()) {
    std::fprintf(stderr, "sstfilter: %s: not a readable RocksDB SST file: %s\n",
                 path.c_str(), s.ToString().c_str());
    return false;
  }
  const std::shared_ptr<const rocksdb::TableProperties> props =
      reader.GetTableProperties();
  if (props == nullptr) {
    std::fprintf(stderr, "sstfilter: %s: no table properties\n", path.c_str());
    return false;
  }
  const rocksdb::TableProperties& p = *props;
  std::printf("%s\n", path.c_str());
  std::printf("  entries:           %llu in %llu data blocks\n",
              static_cast<unsigned long long>(p.num_entries),
              static_cast<unsigned long long>(p.num_data_blocks));
  const int level = levels->Of(path);
  if (level >= 0) {
    std::printf("  level:             %d\n", level);
  } else {
    std::printf(
        "  level:             unknown (not a live file of a database "
        "in its folder)\n");
  }
  if (p.prefix_extractor_name != "nullptr" &&
      !p.prefix_extractor_name.empty()) {
    std::printf("  prefix extractor:  %s\n", p.prefix_extractor_name.c_str());
  }

  PrintRangeFilter(p);

  if (p.filter_policy_name.empty()) {
    std::printf(
        "  filter:            NONE: this file carries no filter, so every "
        "lookup that\n"
        "                     reaches it reads a data block. If the DB was "
        "configured\n"
        "                     with an sstfilter policy, the program that "
        "wrote this file\n"
        "                     did not know it: RocksDB drops an unknown "
        "filter id\n"
        "                     silently. Load the sstfilter plugin (or call\n"
        "                     sstfilter::RegisterRocksDBFilterPolicies) "
        "wherever the\n"
        "                     DB is opened, then compact.\n");
    std::printf("  sstfilter:         nothing to read\n");
    return true;
  }

  // Entries the filter holds: distinct keys or prefixes when RocksDB
  // counted them, else every entry.
  const uint64_t filter_entries =
      p.num_filter_entries > 0 ? p.num_filter_entries : p.num_entries;
  std::printf("  filter policy:     %s\n", p.filter_policy_name.c_str());
  std::printf("  filter size:       %llu bytes\n",
              static_cast<unsigned long long>(p.filter_size));
  std::printf("  filter entries:    %llu\n",
              static_cast<unsigned long long>(filter_entries));
  if (filter_entries > 0) {
    std::printf("  bits per key:      %.2f\n",
                8.0 * static_cast<double>(p.filter_size) /
                    static_cast<double>(filter_entries));
  }
  const bool ours = IsSstfilterPolicy(p.filter_policy_name);
  FilterSummary summary;
  const bool read =
      ours && ReadSstFilters(path, p.filter_policy_name, &summary);
  if (read) {
    std::printf("  filter kinds:      %s\n", summary.KindCounts().c_str());
  }
  PrintVerdict(ours, p.filter_policy_name, read ? &summary : nullptr,
               "this file", "");
  return true;
}

}  // namespace

int Inspect(const std::vector<std::string>& files) {
  bool ok = true;
  Levels levels;
  for (size_t i = 0; i < files.size(); i++) {
    if (i > 0) std::printf("\n");
    ok = InspectFile(files[i], &levels) && ok;
  }
  return ok ? 0 : 1;
}

}  // namespace tool
}  // namespace sstfilter

#else  // !SSTFILTER_TOOL_WITH_ROCKSDB

namespace sstfilter {
namespace tool {

// LevelDB tables only.
int Inspect(const std::vector<std::string>& files) {
  bool ok = true;
  for (size_t i = 0; i < files.size(); i++) {
    if (i > 0) std::printf("\n");
    if (IsLevelDBTable(files[i])) {
      ok = InspectLevelDBTable(files[i]) && ok;
    } else {
      std::fprintf(stderr,
                   "sstfilter: %s: not a LevelDB table, and this sstfilter "
                   "was built without RocksDB\n",
                   files[i].c_str());
      ok = false;
    }
  }
  return ok ? 0 : 1;
}

}  // namespace tool
}  // namespace sstfilter

#endif  // SSTFILTER_TOOL_WITH_ROCKSDB
