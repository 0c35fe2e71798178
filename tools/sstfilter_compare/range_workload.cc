// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include "tools/sstfilter_compare/range_workload.h"

#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/table_properties.h>
#include <rocksdb/version.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "adapters/rocksdb/rocksdb_abi.h"
#include "adapters/rocksdb/rocksdb_compat.h"
#include "nlohmann/json.hpp"
#include "sstfilter/range.h"
#include "sstfilter/rocksdb.h"

// RocksDB's min/max SstQueryFilterConfigsManager (rocksdb/experimental.h)
// took its current form in 9.7.
#if ROCKSDB_MAJOR > 9 || (ROCKSDB_MAJOR == 9 && ROCKSDB_MINOR >= 7)
#define SSTFILTER_HAS_SST_QUERY_FILTER 1
#include <rocksdb/experimental.h>
#else
#define SSTFILTER_HAS_SST_QUERY_FILTER 0
#endif

namespace sstfilter {
namespace compare {
namespace {

namespace fs = std::filesystem;
using harness::BigEndian8;
using harness::ScanCosts;
using harness::ScanHow;

// RocksDB's Bloom beside every rival, as the point filter.
constexpr double kPointBloomBits = 10;

// The FPR bound of `spec` for the empty key ranges [lo, lo + length) asked
// here, whose images are [lo, lo + length - 1], or [lo, lo + length] where
// the upper bound's last byte is 0. The bound holds for image ranges of at
// most 15 * max_range + 1 images (sstfilter/range.h), so for length <= 15 *
// max_range; a longer range may span more than 16 blocks and read "may
// contain", so its bound is 1.
double SpecFprBound(const RangeFilterSpec& spec, uint64_t length) {
  if (spec.max_range < (length + 14) / 15) return 1;
  return RangeFprBound(spec.bits_per_key, length);
}

// Iterator creation: median of this many alternating batches.
constexpr int kCreationRounds = 101;
constexpr int kCreationBatch = 200;
// Off-line build times: median of this many alternating repetitions.
constexpr int kBuildRepetitions = 5;

Status Err(const std::string& what, const rocksdb::Status& s) {
  return EngineError("rocksdb " + what, s.ToString());
}

// The rival of one database.
struct Rival {
  enum Kind { kRange, kPrefixBloom, kSstQueryFilter } kind = kRange;
  std::string range_spec;  // kRange
  int prefix_bytes = 0;    // kPrefixBloom
  // kSstQueryFilter: its collector factory, and the table filter it makes
  // for a scan's bounds.
  std::shared_ptr<rocksdb::TablePropertiesCollectorFactory> sqf_collector;
  harness::TableFilterMaker sqf_table_filter;

  std::string Name() const {
    switch (kind) {
      case kRange:
        return range_spec;
      case kPrefixBloom:
        return "rocksdb:prefix_bloom:" + std::to_string(prefix_bytes);
      case kSstQueryFilter:
        break;
    }
    return "rocksdb:sst_query_filter";
  }
};

// RocksDB's min/max per table of the keys' first 8 bytes (the image the
// ranges are drawn in): one filtering version with a bytewise min/max of
// segment 0 of a capped extractor of width 8. NotSupported before 9.7.
Status MakeSstQueryFilter(Rival* rival) {
#if SSTFILTER_HAS_SST_QUERY_FILTER
  namespace ex = rocksdb::experimental;
  ex::SstQueryFilterConfigs configs;
  configs.extractor = ex::MakeSharedCappedKeySegmentsExtractor({8});
  configs.filters = {ex::MakeSharedBytewiseMinMaxSQFC(ex::SelectKeySegment(0))};
  std::shared_ptr<ex::SstQueryFilterConfigsManager> manager;
  rocksdb::Status s = ex::SstQueryFilterConfigsManager::MakeShared(
      {{1, {{"range", configs}}}}, &manager);
  std::shared_ptr<ex::SstQueryFilterConfigsManager::Factory> factory;
  if (s.ok()) s = manager->MakeSharedFactory("range", 1, &factory);
  if (!s.ok()) return Err("SstQueryFilterConfigsManager", s);
  rival->sqf_collector = factory;  // it keeps the manager alive
  rival->sqf_table_filter = [factory](const rocksdb::Slice& lower,
                                      const rocksdb::Slice& upper) {
    return factory->GetTableFilterForRangeQuery(lower, upper);
  };
  return Status::OK();
#else
  (void)rival;
  return Status::NotSupported(
      "not available: RocksDB " + std::to_string(ROCKSDB_MAJOR) + "." +
      std::to_string(ROCKSDB_MINOR) + "." + std::to_string(ROCKSDB_PATCH) +
      " has no SstQueryFilterConfigsManager (rocksdb/experimental.h, 9.7 and "
      "later)");
#endif
}

Status MakeOptions(const Rival& rival, const RocksDBTree& tree,
                   std::shared_ptr<rocksdb::Statistics> stats,
                   rocksdb::Options* o) {
  o->create_if_missing = true;
  o->error_if_exists = true;
  o->compression = rocksdb::kNoCompression;
  o->bottommost_compression = rocksdb::kDisableCompressionOption;
  o->level_compaction_dynamic_level_bytes = true;
  o->write_buffer_size = tree.write_buffer_size;
  o->max_bytes_for_level_base = tree.max_bytes_for_level_base;
  o->target_file_size_base = tree.target_file_size_base;
  o->max_open_files = -1;
  o->statistics = std::move(stats);
  o->info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  rocksdb::BlockBasedTableOptions t;
  t.block_size = 4096;
  // Index and filter blocks in the cache, so that index accesses count
  // (harness/rocksdb_range_scan.h); data blocks never enter it.
  t.cache_index_and_filter_blocks = true;
  t.block_cache = rocksdb::NewLRUCache(64 << 20);
  t.whole_key_filtering = true;
  t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(kPointBloomBits));
  switch (rival.kind) {
    case Rival::kPrefixBloom:
      o->prefix_extractor.reset(rocksdb::NewFixedPrefixTransform(
          static_cast<size_t>(rival.prefix_bytes)));
      break;
    case Rival::kRange: {
      std::shared_ptr<rocksdb::TablePropertiesCollectorFactory> f;
      rocksdb::Status s = NewRocksDBRangeCollectorFactory(rival.range_spec, &f);
      if (!s.ok()) return Err("range collector", s);
      o->table_properties_collector_factories.push_back(f);
      break;
    }
    case Rival::kSstQueryFilter:
      o->table_properties_collector_factories.push_back(rival.sqf_collector);
      break;
  }
  o->table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
  return Status::OK();
}

// The compare tool's paced natural load (docs/COMPARE.md): chunks of a
// flush, each flushed and its compactions settled before the next.
Status Load(rocksdb::DB* db, const KeySpace& keys, const RocksDBTree& tree,
            Progress* progress) {
  std::string key, value;
  const uint64_t n = keys.num_keys();
  for (uint64_t begin = 0; begin < n; begin += tree.keys_per_flush) {
    const uint64_t end = std::min(n, begin + tree.keys_per_flush);
    for (uint64_t i = begin; i < end; i++) {
      keys.Key(i, &key);
      keys.Value(i, &value);
      rocksdb::Status s = db->Put(rocksdb::WriteOptions(), key, value);
      if (!s.ok()) return Err("Put", s);
    }
    rocksdb::Status s = db->Flush(rocksdb::FlushOptions());
    if (s.ok()) s = harness::WaitForCompactions(db);
    if (!s.ok()) return Err("load", s);
    progress->Update(end, n);
  }
  return Status::OK();
}

// The property RocksDB's SstQueryFilterConfigsManager stores its filters in
// (db/experimental.cc; not in its public headers).
constexpr char kSqfProperty[] = "rocksdb.sqfc";

// Tables, entries, filter sizes and levels of the settled tree; the
// rival's bits per key are those of `property` where tables have it.
void Describe(rocksdb::DB* db, const std::string& property, RangeRun* run) {
  rocksdb::TablePropertiesCollection props;
  db->GetPropertiesOfAllTables(&props);
  uint64_t filter_bytes = 0, range_bytes = 0;
  run->tables = props.size();
  run->entries = 0;
  for (const auto& [file, p] : props) {
    filter_bytes += p->filter_size;
    run->entries += p->num_entries;
    auto it = p->user_collected_properties.find(property);
    if (it != p->user_collected_properties.end()) {
      range_bytes += it->second.size();
    }
  }
  const double n = static_cast<double>(std::max<uint64_t>(1, run->entries));
  const double filter_bits = static_cast<double>(filter_bytes) * 8 / n;
  run->rival_bits_per_key =
      range_bytes > 0 ? range_bytes * 8.0 / n : filter_bits;
  run->point_bits_per_key = filter_bits;
  rocksdb::ColumnFamilyMetaData meta;
  db->GetColumnFamilyMetaData(&meta);
  for (const rocksdb::LevelMetaData& level : meta.levels) {
    if (!run->files_per_level.empty()) run->files_per_level += ", ";
    run->files_per_level += "L" + std::to_string(level.level) + " " +
                            std::to_string(level.files.size());
  }
}

// Whether [lo, lo + len) lies within one prefix of `bytes` bytes.
bool FitsPrefix(uint64_t lo, uint64_t len, int bytes) {
  if (bytes >= 8) return len == 1;
  const int shift = 8 * (8 - bytes);
  return (lo >> shift) == ((lo + len - 1) >> shift);
}

// One row: the same ranges for every rival (the sampler's seed is the
// row's). Alternates which scan goes first.
Status RunRow(rocksdb::DB* db, rocksdb::Statistics* stats, const Rival& rival,
              const std::vector<uint64_t>& images, uint64_t scans,
              uint64_t seed, RangeRow* row) {
  harness::RangeSampler ranges(&images, seed);
  for (uint64_t q = 0; q < scans; q++) {
    const uint64_t len = row->length;
    const uint64_t lo = row->empty ? ranges.Empty(len) : ranges.NonEmpty(len);
    const std::string lower = BigEndian8(lo), upper = BigEndian8(lo + len);
    ScanHow none, with;
    switch (rival.kind) {
      case Rival::kPrefixBloom:
        with.prefix_seek = FitsPrefix(lo, len, rival.prefix_bytes);
        row->fit += with.prefix_seek;
        break;
      case Rival::kRange:
        with.range_filter = true;
        break;
      case Rival::kSstQueryFilter:
        with.other_filter = &rival.sqf_table_filter;
        break;
    }
    std::vector<std::string> a, b;
    for (int side = 0; side < 2; side++) {
      if ((side + q) % 2 == 0) {
        a = MeasureScan(db, stats, lower, upper, none, &row->none);
      } else {
        b = MeasureScan(db, stats, lower, upper, with, &row->with);
      }
    }
    if (a != b) {
      return Status::Corruption(
          "scan of [" + std::to_string(lo) + ", +" + std::to_string(len) +
          ") returned " + std::to_string(b.size()) + " keys, " +
          std::to_string(a.size()) + " without a range filter");
    }
  }
  return Status::OK();
}

std::string RivalHow(const Rival& rival) {
  if (rival.kind == Rival::kRange) {
    return "collector sstfilter.range_collector (" + rival.range_spec +
           "), scans with RocksDBRangeScan::Apply (bounds and table_filter)";
  }
  if (rival.kind == Rival::kSstQueryFilter) {
    return "SstQueryFilterConfigsManager: MakeSharedBytewiseMinMaxSQFC("
           "SelectKeySegment(0)) over MakeSharedCappedKeySegmentsExtractor({8})"
           " (the keys' first 8 bytes), its Factory as the collector; scans "
           "with the bounds and table_filter = GetTableFilterForRangeQuery("
           "lower, upper)";
  }
  const std::string p = std::to_string(rival.prefix_bytes);
  return "prefix_extractor=rocksdb.FixedPrefix." + p +
         ", whole_key_filtering=true, NewBloomFilterPolicy(10); a range within "
         "one " +
         p +
         "-byte prefix: ReadOptions prefix_same_as_start=true, "
         "total_order_seek=false, iterate_lower/upper_bound; other ranges: "
         "total_order_seek=true and the bounds (no filter)";
}

Status RunRival(const RangeWorkloadOptions& options, const KeySpace& keys,
                const std::vector<uint64_t>& images, const Rival& rival,
                int index, Progress* progress, RangeRun* run) {
  run->how = RivalHow(rival);
  auto stats = rocksdb::CreateDBStatistics();
  rocksdb::Options o;
  Status err = MakeOptions(rival, options.tree, stats, &o);
  if (!err.ok()) return err;
  const std::string dir =
      (fs::path(options.dir) / ("range-" + std::to_string(index))).string();
  std::unique_ptr<rocksdb::DB> db;
  rocksdb::Status s =
      OpenInto(&db, [&](auto* out) { return rocksdb::DB::Open(o, dir, out); });
  if (!s.ok()) return Err("Open " + dir, s);
  progress->Begin("range " + run->name + ": load");
  const Clock::time_point start = Clock::now();
  err = Load(db.get(), keys, options.tree, progress);
  if (!err.ok()) return err;
  run->load_seconds = SecondsSince(start);
  Describe(db.get(),
           rival.kind == Rival::kRange            ? kRocksDBRangeProperty
           : rival.kind == Rival::kSstQueryFilter ? kSqfProperty
                                                  : "",
           run);
  progress->End(std::to_string(run->tables) + " tables");
  progress->Begin("range " + run->name + ": scans");
  uint64_t row_index = 0;
  for (uint64_t len : options.lengths) {
    for (bool empty : {true, false}) {
      RangeRow row;
      row.empty = empty;
      row.length = len;
      err = RunRow(db.get(), stats.get(), rival, images, options.scans,
                   ++row_index, &row);
      if (!err.ok()) return err;
      run->rows.push_back(row);
      progress->Update(row_index, options.lengths.size() * 2);
    }
  }
  harness::RangeSampler sampler(&images, 0);
  const harness::TableFilterMaker* other =
      rival.kind == Rival::kSstQueryFilter ? &rival.sqf_table_filter : nullptr;
  uint64_t lo = sampler.Empty(16);
  harness::MeasureIteratorCreation(
      db.get(), BigEndian8(lo), BigEndian8(lo + 16), kCreationRounds,
      kCreationBatch, &run->create_none_us, &run->create_with_us, other);
  lo = sampler.NonEmpty(16);
  harness::MeasureIteratorCreation(
      db.get(), BigEndian8(lo), BigEndian8(lo + 16), kCreationRounds,
      kCreationBatch, &run->create_nonempty_none_us,
      &run->create_nonempty_with_us, other);
  progress->End("done");
  s = db->Close();
  if (!s.ok()) return Err("Close", s);
  db.reset();
  if (!options.keep) rocksdb::DestroyDB(dir, o);
  return Status::OK();
}

// Off-line build time per key of each range spec and of RocksDB's Bloom,
// over all keys in tables of the mean keys per table; median of
// kBuildRepetitions alternating repetitions.
void MeasureBuild(const RangeWorkloadOptions& options,
                  const std::vector<std::string>& all, RangeReport* report) {
  const uint64_t per_table = std::max<uint64_t>(1, report->keys_per_table);
  std::unique_ptr<const rocksdb::FilterPolicy> bloom(
      rocksdb::NewBloomFilterPolicy(kPointBloomBits));
  rocksdb::BlockBasedTableOptions t;
  const rocksdb::FilterBuildingContext context(t);
  // Builds every table's filter with `add` and `finish`; returns ns per key
  // and adds the bytes to *bytes.
  auto time_tables = [&](auto&& add, auto&& finish, uint64_t* bytes) {
    const Clock::time_point start = Clock::now();
    for (uint64_t b = 0; b < all.size(); b += per_table) {
      const uint64_t e = std::min<uint64_t>(all.size(), b + per_table);
      for (uint64_t i = b; i < e; i++) add(all[i]);
      *bytes += finish();
    }
    return SecondsSince(start) * 1e9 / static_cast<double>(all.size());
  };
  std::vector<std::string> names = options.range_specs;
  names.push_back("rocksdb:bloom:10");
  std::vector<std::vector<double>> ns(names.size());
  std::vector<uint64_t> bytes(names.size());
  for (int rep = 0; rep < kBuildRepetitions; rep++) {
    for (size_t r = 0; r < names.size(); r++) {
      bytes[r] = 0;
      if (r + 1 == names.size()) {
        std::unique_ptr<rocksdb::FilterBitsBuilder> builder(
            bloom->GetBuilderWithContext(context));
        ns[r].push_back(
            time_tables([&](const std::string& k) { builder->AddKey(k); },
                        [&] {
                          std::unique_ptr<const char[]> buf;
                          return builder->Finish(&buf).size();
                        },
                        &bytes[r]));
        continue;
      }
      RangeFilterSpec spec;  // checked by the caller
      if (!ParseRangeFilterSpec(names[r], &spec).ok()) continue;
      RangeFilterBuilder builder(spec);
      std::string out;
      ns[r].push_back(
          time_tables([&](const std::string& k) { builder.AddKey(k); },
                      [&] {
                        out.clear();
                        builder.Finish(&out);
                        return out.size();
                      },
                      &bytes[r]));
    }
  }
  for (size_t r = 0; r < names.size(); r++) {
    if (ns[r].empty()) continue;
    std::sort(ns[r].begin(), ns[r].end());
    report->build.push_back({names[r], ns[r][ns[r].size() / 2],
                             bytes[r] * 8.0 / static_cast<double>(all.size())});
  }
}

// RangeFpr for every spec and length.
void MeasureFpr(const RangeWorkloadOptions& options,
                const std::vector<std::string>& all, RangeReport* report) {
  const uint64_t per_table = std::max<uint64_t>(1, report->keys_per_table);
  const uint64_t tables = (all.size() + per_table - 1) / per_table;
  std::vector<std::vector<uint64_t>> images(tables);
  for (uint64_t i = 0; i < all.size(); i++) {
    images[i / per_table].push_back(KeySegmentImage(all[i], 0, 8));
  }
  for (auto& t : images) std::sort(t.begin(), t.end());
  for (const std::string& text : options.range_specs) {
    RangeFilterSpec spec;
    if (!ParseRangeFilterSpec(text, &spec).ok()) continue;
    std::vector<std::string> filters(tables);
    RangeFilterBuilder builder(spec);
    for (uint64_t t = 0; t < tables; t++) {
      for (uint64_t i = t * per_table;
           i < std::min<uint64_t>(all.size(), (t + 1) * per_table); i++) {
        builder.AddKey(all[i]);
      }
      builder.Finish(&filters[t]);
    }
    for (uint64_t len : options.lengths) {
      RangeFpr f{text, len, 0, 0, SpecFprBound(spec, len)};
      harness::Random64 rng(len);
      while (f.queries < kFprQueries) {
        const uint64_t t = f.queries % tables;
        const uint64_t lo = rng.Next();
        if (lo > ~uint64_t{0} - len) continue;
        // Empty: no image of the table in [lo, lo + len] (the upper bound's
        // image is asked too where its last byte is 0).
        auto it = std::lower_bound(images[t].begin(), images[t].end(), lo);
        if (it != images[t].end() && *it <= lo + len) continue;
        f.queries++;
        f.positives +=
            RangeFilterReader::Open(filters[t])
                .MayContainKeys(BigEndian8(lo), BigEndian8(lo + len));
      }
      report->fpr.push_back(f);
    }
  }
}

}  // namespace

Status RunRangeWorkload(const RangeWorkloadOptions& options,
                        const KeySpace& keys, Progress* progress,
                        RangeReport* report) {
  std::vector<uint64_t> images(keys.num_keys());
  std::string key;
  for (uint64_t i = 0; i < keys.num_keys(); i++) {
    keys.Key(i, &key);
    images[i] = KeySegmentImage(key, 0, 8);
  }
  std::sort(images.begin(), images.end());
  std::vector<Rival> rivals;
  for (const std::string& spec : options.range_specs) {
    Rival r;
    r.range_spec = spec;
    rivals.push_back(r);
  }
  Rival prefix;
  prefix.kind = Rival::kPrefixBloom;
  prefix.prefix_bytes = options.prefix_bytes;
  rivals.push_back(prefix);
  Rival sqf;
  sqf.kind = Rival::kSstQueryFilter;
  const Status sqf_made = MakeSstQueryFilter(&sqf);
  rivals.push_back(sqf);
  int index = 0;
  for (const Rival& rival : rivals) {
    RangeRun run;
    run.name = rival.Name();
    if (rival.kind == Rival::kSstQueryFilter && !sqf_made.ok()) {
      run.skipped = true;
      run.skip_reason = sqf_made.message();
      report->runs.push_back(std::move(run));
      continue;
    }
    Status err =
        RunRival(options, keys, images, rival, ++index, progress, &run);
    if (!err.ok()) return err;
    if (report->keys_per_table == 0 && run.tables > 0) {
      report->keys_per_table = run.entries / run.tables;
    }
    report->runs.push_back(std::move(run));
  }
  progress->Begin("range: build time per key, FPR off line");
  std::vector<std::string> all(keys.num_keys());
  for (uint64_t i = 0; i < keys.num_keys(); i++) keys.Key(i, &all[i]);
  MeasureBuild(options, all, report);
  MeasureFpr(options, all, report);
  progress->End("done");
  return Status::OK();
}

namespace {

std::string Printf(const char* format, ...)
    __attribute__((format(printf, 1, 2)));
std::string Printf(const char* format, ...) {
  va_list ap, again;
  va_start(ap, format);
  va_copy(again, ap);
  const int n = std::vsnprintf(nullptr, 0, format, ap);
  va_end(ap);
  std::string out(static_cast<size_t>(std::max(n, 0)) + 1, '\0');
  std::vsnprintf(out.data(), out.size(), format, again);
  va_end(again);
  out.pop_back();
  return out;
}

double Ratio(double a, double b) { return b == 0 ? 0 : a / b; }

// Empty rows of a rival with a table filter: the tables' answers "may hold
// a key" per table asked, and for a range spec the bound L / 2^(B-2);
// negative where there is none.
void Fpr(const RangeRun& run, const RangeRow& row, double* fpr, double* bound) {
  *fpr = *bound = -1;
  if (!row.empty || row.with.tables_checked == 0) return;
  *fpr = Ratio(static_cast<double>(row.with.tables_passed),
               static_cast<double>(row.with.tables_checked));
  RangeFilterSpec spec;
  if (ParseRangeFilterSpec(run.name, &spec).ok()) {
    *bound = SpecFprBound(spec, row.length);
  }
}

std::string RowText(const RangeRun& run, const RangeRow& row) {
  const ScanCosts& a = row.none;
  const ScanCosts& b = row.with;
  double fpr, bound;
  Fpr(run, row, &fpr, &bound);
  const std::string fpr_text = fpr < 0     ? ""
                               : bound < 0 ? Printf("%.5f", fpr)
                                           : Printf("%.5f (%.5f)", fpr, bound);
  const std::string fit =
      run.name.rfind("rocksdb:prefix", 0) == 0
          ? Printf("%.3f", Ratio(static_cast<double>(row.fit),
                                 static_cast<double>(a.scans)))
          : "";
  return Printf(
      "%-24s %-9s %5llu | %6.3f %6.3f %6.3fx | %6.3f %6.3f | %6.1f %6.1f | "
      "%7.1f %7.1f | %-19s %s\n",
      run.name.c_str(), row.empty ? "empty" : "non-empty",
      static_cast<unsigned long long>(row.length), a.PerScan(a.data_blocks),
      b.PerScan(b.data_blocks),
      Ratio(static_cast<double>(b.data_blocks),
            static_cast<double>(a.data_blocks)),
      a.PerScan(a.index_blocks), b.PerScan(b.index_blocks),
      a.PerScan(a.block_read_bytes) / 1024,
      b.PerScan(b.block_read_bytes) / 1024, a.PerScan(a.scan_us),
      b.PerScan(b.scan_us), fpr_text.c_str(), fit.c_str());
}

nlohmann::ordered_json CostsJson(const ScanCosts& c) {
  return {{"scans", c.scans},
          {"keys", c.keys},
          {"data_blocks", c.data_blocks},
          {"index_blocks", c.index_blocks},
          {"block_read_count", c.block_reads},
          {"block_read_byte", c.block_read_bytes},
          {"index_block_read_count", c.index_block_reads},
          {"tables_checked", c.tables_checked},
          {"tables_passed", c.tables_passed},
          {"scan_us", c.scan_us},
          {"create_us", c.create_us},
          {"data_blocks_per_scan", c.PerScan(c.data_blocks)},
          {"index_blocks_per_scan", c.PerScan(c.index_blocks)},
          {"bytes_per_scan", c.PerScan(c.block_read_bytes)},
          {"us_per_scan", c.PerScan(c.scan_us)}};
}

}  // namespace

std::string FormatRangeText(const RangeReport& report) {
  std::string out;
  for (const auto& [name, value] : report.header) {
    out += Printf("%-10s ", (name + ":").c_str()) + value + "\n";
  }
  out +=
      "\nRange scans (per scan: without a range filter, with the rival, "
      "on the rival's database; FPR: tables that may hold a key of an "
      "empty range per table asked, and the bound L/2^(B-2))\n";
  out += Printf("%-24s %-9s %5s | %-21s | %-13s | %-13s | %-15s | %-19s %s\n",
                "rival", "ranges", "L", "data blocks (x)", "index blocks",
                "KiB read", "us/scan", "FPR (bound)", "fit prefix");
  for (const RangeRun& run : report.runs) {
    for (const RangeRow& row : run.rows) out += RowText(run, row);
  }
  out += "\nDatabases\n";
  for (const RangeRun& run : report.runs) {
    if (run.skipped) {
      out += run.name + ": skipped: " + run.skip_reason + "\n";
      continue;
    }
    out += Printf(
        "%s: %llu tables (%s), load %.1f s; %.2f bits/key (RocksDB's Bloom "
        "%.2f); NewIterator, empty range: %.2f us without, %.2f us with "
        "(%.3fx), non-empty: %.2f / %.2f us (%.3fx)\n  %s\n",
        run.name.c_str(), static_cast<unsigned long long>(run.tables),
        run.files_per_level.c_str(), run.load_seconds, run.rival_bits_per_key,
        run.point_bits_per_key, run.create_none_us, run.create_with_us,
        Ratio(run.create_with_us, run.create_none_us),
        run.create_nonempty_none_us, run.create_nonempty_with_us,
        Ratio(run.create_nonempty_with_us, run.create_nonempty_none_us),
        run.how.c_str());
  }
  out += Printf("\nBuilding filters off line (tables of %llu keys)\n",
                static_cast<unsigned long long>(report.keys_per_table));
  for (const RangeBuildCost& b : report.build) {
    out += Printf("%-18s %7.1f ns/key %6.2f bits/key\n", b.name.c_str(),
                  b.ns_per_key, b.bits_per_key);
  }
  out += Printf("\nRange filter FPR off line (%llu empty ranges per row)\n",
                static_cast<unsigned long long>(kFprQueries));
  for (const RangeFpr& f : report.fpr) {
    const double fpr =
        Ratio(static_cast<double>(f.positives), static_cast<double>(f.queries));
    out += Printf("%-10s L %5llu: FPR %.6f, bound L/2^(B-2) %.6f (%.2fx)\n",
                  f.spec.c_str(), static_cast<unsigned long long>(f.length),
                  fpr, f.bound, Ratio(fpr, f.bound));
  }
  return out;
}

std::string FormatRangeJson(const RangeReport& report) {
  nlohmann::ordered_json j;
  j["tool"] = "sstfilter_compare";
  j["workload"] = "range";
  for (const auto& [name, value] : report.header) j["header"][name] = value;
  j["runs"] = nlohmann::ordered_json::array();
  for (const RangeRun& run : report.runs) {
    nlohmann::ordered_json r = {
        {"name", run.name},
        {"how", run.how},
        {"skipped", run.skipped},
        {"skip_reason", run.skip_reason},
        {"load_seconds", run.load_seconds},
        {"tables", run.tables},
        {"entries", run.entries},
        {"files_per_level", run.files_per_level},
        {"rival_bits_per_key", run.rival_bits_per_key},
        {"point_bits_per_key", run.point_bits_per_key},
        {"create_none_us", run.create_none_us},
        {"create_with_us", run.create_with_us},
        {"create_nonempty_none_us", run.create_nonempty_none_us},
        {"create_nonempty_with_us", run.create_nonempty_with_us}};
    r["rows"] = nlohmann::ordered_json::array();
    for (const RangeRow& row : run.rows) {
      double fpr, bound;
      Fpr(run, row, &fpr, &bound);
      r["rows"].push_back(
          {{"empty", row.empty},
           {"length", row.length},
           {"fit", row.fit},
           {"fpr",
            fpr < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(fpr)},
           {"fpr_bound", bound < 0 ? nlohmann::ordered_json()
                                   : nlohmann::ordered_json(bound)},
           {"none", CostsJson(row.none)},
           {"with", CostsJson(row.with)}});
    }
    j["runs"].push_back(r);
  }
  j["keys_per_table"] = report.keys_per_table;
  j["build"] = nlohmann::ordered_json::array();
  for (const RangeBuildCost& b : report.build) {
    j["build"].push_back({{"name", b.name},
                          {"ns_per_key", b.ns_per_key},
                          {"bits_per_key", b.bits_per_key}});
  }
  j["fpr"] = nlohmann::ordered_json::array();
  for (const RangeFpr& f : report.fpr) {
    j["fpr"].push_back({{"spec", f.spec},
                        {"length", f.length},
                        {"queries", f.queries},
                        {"positives", f.positives},
                        {"bound", f.bound}});
  }
  return j.dump(2) + "\n";
}

}  // namespace compare
}  // namespace sstfilter
