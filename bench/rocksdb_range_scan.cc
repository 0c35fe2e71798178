// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// rocksdb_range_scan: short scans on a natural RocksDB tree, with and
// without the range filter (sstfilter/rocksdb.h, RocksDBRangeScan), in one
// process on one database, alternating scan by scan.
//
//   build/bench/rocksdb_range_scan --num=1000000 --spec=range:14
//
// Keys are the compare tool's: 8 big-endian bytes of a hashed key number,
// then '0' pad bytes (16 bytes in all); their image is the first 8 bytes.
// For each range length L (in images) it runs --scans empty ranges
// [lo, lo + L) (checked empty against the loaded keys) and as many
// non-empty ones (starting up to L - 1 before a loaded key), and prints per
// scan (harness/rocksdb_range_scan.h): data-block accesses (block cache
// hits + misses; scans never fill the cache, so each is a read from the
// file), the bytes of blocks read from the file, index-block accesses,
// microseconds per scan (NewIterator, Seek, Next to the end) and per
// NewIterator alone; and the ratios filtered / unfiltered. Every filtered
// scan's keys are compared with the unfiltered scan's. The compare tool's
// range workload (docs/COMPARE.md) runs the same scans against RocksDB's
// prefix Bloom and several specs.

#include "harness/rocksdb_range_scan.h"

#include <gflags/gflags.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "adapters/rocksdb/rocksdb_compat.h"
#include "harness/keys.h"
#include "harness/scratch.h"
#include "sstfilter/range.h"
#include "sstfilter/rocksdb.h"

DEFINE_uint64(num, 1000000, "keys loaded");
DEFINE_int32(value_size, 100, "bytes per value");
DEFINE_string(spec, "range:14", "range filter spec of the collector");
DEFINE_uint64(scans, 2000, "scans per (length, empty or not)");
DEFINE_string(lengths, "1,16,256,4096", "range lengths in images");
DEFINE_int32(levels, 4, "levels the natural tree is sized for");

namespace sstfilter {
namespace {

using Clock = std::chrono::steady_clock;
using harness::BigEndian8;
using harness::ScanCosts;

uint64_t Image(const std::string& key) { return KeySegmentImage(key, 0, 8); }

rocksdb::Options MakeOptions(std::shared_ptr<rocksdb::Statistics> stats) {
  rocksdb::Options o;
  o.create_if_missing = true;
  o.statistics = std::move(stats);
  o.compression = rocksdb::kNoCompression;
  o.level_compaction_dynamic_level_bytes = true;
  const double data =
      static_cast<double>(FLAGS_num) * (16 + FLAGS_value_size + 8);
  const double base = data / std::pow(10.0, FLAGS_levels - 1);
  o.write_buffer_size =
      std::max<uint64_t>(64 << 10, static_cast<uint64_t>(base / 4));
  o.max_bytes_for_level_base =
      std::max<uint64_t>(o.write_buffer_size, static_cast<uint64_t>(base));
  o.target_file_size_base = o.write_buffer_size;
  rocksdb::BlockBasedTableOptions bt;
  bt.cache_index_and_filter_blocks = true;  // so index accesses count
  bt.block_cache = rocksdb::NewLRUCache(64 << 20);
  bt.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(bt));
  std::shared_ptr<rocksdb::TablePropertiesCollectorFactory> f;
  rocksdb::Status s = NewRocksDBRangeCollectorFactory(FLAGS_spec, &f);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    std::exit(2);
  }
  o.table_properties_collector_factories.push_back(f);
  return o;
}

void PrintRow(const char* what, uint64_t len, const ScanCosts& base,
              const ScanCosts& filt) {
  const double n = static_cast<double>(base.scans);
  auto ratio = [](double a, double b) { return b == 0 ? 0.0 : a / b; };
  std::printf(
      "%-9s %5llu | %7.3f %7.3f %6.3f | %6.3f %6.3f | %7.0f %7.0f | %6.2f "
      "%6.2f | %6.2f %6.2f | %5.2f %5.2f\n",
      what, static_cast<unsigned long long>(len), base.data_blocks / n,
      filt.data_blocks / n,
      ratio(static_cast<double>(filt.data_blocks),
            static_cast<double>(base.data_blocks)),
      base.index_blocks / n, filt.index_blocks / n, base.block_read_bytes / n,
      filt.block_read_bytes / n, base.scan_us / n, filt.scan_us / n,
      base.create_us / n, filt.create_us / n, ratio(filt.scan_us, base.scan_us),
      ratio(filt.create_us, base.create_us));
}

int Run() {
  harness::ScratchDir dir("sstfilter_range_scan");
  auto stats = rocksdb::CreateDBStatistics();
  rocksdb::Options options = MakeOptions(stats);
  std::unique_ptr<rocksdb::DB> db;
  rocksdb::Status s = OpenInto(&db, [&](auto* out) {
    return rocksdb::DB::Open(options, dir.path(), out);
  });
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  const harness::KeySpace keys = harness::KeySpace::Hashed(1, "00000000");
  std::vector<uint64_t> images;
  std::string key, value;
  const auto load_start = Clock::now();
  for (uint64_t i = 0; i < FLAGS_num; i++) {
    keys.Key(i, &key);
    keys.Value(i, static_cast<size_t>(FLAGS_value_size), &value);
    db->Put(rocksdb::WriteOptions(), key, value);
    images.push_back(Image(key));
  }
  db->Flush(rocksdb::FlushOptions());
  s = harness::WaitForCompactions(db.get());
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  const double load_s =
      std::chrono::duration<double>(Clock::now() - load_start).count();
  std::sort(images.begin(), images.end());

  std::string levels;
  db->GetProperty("rocksdb.levelstats", &levels);
  rocksdb::TablePropertiesCollection props;
  db->GetPropertiesOfAllTables(&props);
  uint64_t filter_bytes = 0, range_bytes = 0, entries = 0;
  for (const auto& [file, p] : props) {
    filter_bytes += p->filter_size;
    entries += p->num_entries;
    auto it = p->user_collected_properties.find(kRocksDBRangeProperty);
    if (it != p->user_collected_properties.end()) {
      range_bytes += it->second.size();
    }
  }
  std::printf("rocksdb_range_scan: %llu keys, %s, %zu tables, load %.1f s\n%s",
              static_cast<unsigned long long>(FLAGS_num), FLAGS_spec.c_str(),
              props.size(), load_s, levels.c_str());
  std::printf(
      "range filters: %.2f bits/key; RocksDB's Bloom (point filter, "
      "bloom 10): %.2f bits/key\n",
      range_bytes * 8.0 / entries, filter_bytes * 8.0 / entries);

  std::printf("\n%-9s %5s | %-22s | %-13s | %-15s | %-13s | %-13s | %s\n",
              "ranges", "L", "data blocks/scan", "index/scan",
              "data bytes/scan", "us/scan", "us/NewIter", "ratios");
  std::printf(
      "%-9s %5s | %7s %7s %6s | %6s %6s | %7s %7s | %6s %6s | %6s "
      "%6s | %5s %5s\n",
      "", "", "none", "range", "ratio", "none", "range", "none", "range",
      "none", "range", "none", "range", "scan", "iter");
  harness::RangeSampler ranges(&images, 42);
  std::string lengths = FLAGS_lengths + ",";
  int mismatches = 0;
  for (size_t pos = 0; pos < lengths.size();) {
    const size_t comma = lengths.find(',', pos);
    const uint64_t len = std::stoull(lengths.substr(pos, comma - pos));
    pos = comma + 1;
    for (bool empty : {true, false}) {
      ScanCosts base, filt;
      for (uint64_t q = 0; q < FLAGS_scans; q++) {
        const uint64_t lo = empty ? ranges.Empty(len) : ranges.NonEmpty(len);
        const std::string lower = BigEndian8(lo), upper = BigEndian8(lo + len);
        harness::ScanHow none, range;
        range.range_filter = true;
        // Alternate which goes first, so caching favours neither.
        std::vector<std::string> a, b;
        if (q % 2 == 0) {
          a = MeasureScan(db.get(), stats.get(), lower, upper, none, &base);
          b = MeasureScan(db.get(), stats.get(), lower, upper, range, &filt);
        } else {
          b = MeasureScan(db.get(), stats.get(), lower, upper, range, &filt);
          a = MeasureScan(db.get(), stats.get(), lower, upper, none, &base);
        }
        mismatches += a != b;
      }
      PrintRow(empty ? "empty" : "non-empty", len, base, filt);
    }
  }
  std::printf("scans whose keys differed with the filter: %d\n", mismatches);
  return mismatches == 0 ? 0 : 1;
}

}  // namespace
}  // namespace sstfilter

int main(int argc, char** argv) {
  gflags::SetUsageMessage(
      "short scans on a natural RocksDB tree with and without the range "
      "filter");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  return sstfilter::Run();
}
