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
// scan: data-block accesses (block cache hits + misses), data blocks read
// from the file (misses) and their bytes, index-block accesses, keys
// returned, microseconds per scan (NewIterator, Seek, Next to the end) and
// per NewIterator alone; and the ratios filtered / unfiltered. Every
// filtered scan's keys are compared with the unfiltered scan's.

#include <gflags/gflags.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

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

std::string BigEndian(uint64_t x) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; i++) s[i] = static_cast<char>(x >> (56 - 8 * i));
  return s;
}

uint64_t Image(const std::string& key) { return KeySegmentImage(key, 0, 8); }

struct Totals {
  uint64_t data = 0, data_miss = 0, data_bytes = 0, index = 0, keys = 0;
  double scan_us = 0, create_us = 0;
  uint64_t scans = 0;
};

uint64_t Ticker(rocksdb::Statistics* s, rocksdb::Tickers t) {
  return s->getTickerCount(t);
}

// One scan of [lower, upper); adds its costs to *t; returns its keys.
std::vector<std::string> ScanOnce(rocksdb::DB* db, rocksdb::Statistics* st,
                                  const std::string& lower,
                                  const std::string& upper, bool filtered,
                                  Totals* t) {
  RocksDBRangeScan scan(lower, upper);
  rocksdb::Slice lo(lower), hi(upper);
  rocksdb::ReadOptions ro;
  if (filtered) {
    scan.Apply(&ro);
  } else {
    ro.iterate_lower_bound = &lo;
    ro.iterate_upper_bound = &hi;
  }
  const uint64_t data0 = Ticker(st, rocksdb::BLOCK_CACHE_DATA_HIT) +
                         Ticker(st, rocksdb::BLOCK_CACHE_DATA_MISS);
  const uint64_t miss0 = Ticker(st, rocksdb::BLOCK_CACHE_DATA_MISS);
  const uint64_t bytes0 = Ticker(st, rocksdb::BLOCK_CACHE_DATA_BYTES_INSERT);
  const uint64_t index0 = Ticker(st, rocksdb::BLOCK_CACHE_INDEX_HIT) +
                          Ticker(st, rocksdb::BLOCK_CACHE_INDEX_MISS);
  std::vector<std::string> keys;
  const auto start = Clock::now();
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ro));
  const auto created = Clock::now();
  for (it->Seek(lower); it->Valid(); it->Next()) {
    keys.push_back(it->key().ToString());
  }
  const auto end = Clock::now();
  it.reset();
  t->data += Ticker(st, rocksdb::BLOCK_CACHE_DATA_HIT) +
             Ticker(st, rocksdb::BLOCK_CACHE_DATA_MISS) - data0;
  t->data_miss += Ticker(st, rocksdb::BLOCK_CACHE_DATA_MISS) - miss0;
  t->data_bytes += Ticker(st, rocksdb::BLOCK_CACHE_DATA_BYTES_INSERT) - bytes0;
  t->index += Ticker(st, rocksdb::BLOCK_CACHE_INDEX_HIT) +
              Ticker(st, rocksdb::BLOCK_CACHE_INDEX_MISS) - index0;
  t->keys += keys.size();
  t->scan_us += std::chrono::duration<double, std::micro>(end - start).count();
  t->create_us +=
      std::chrono::duration<double, std::micro>(created - start).count();
  t->scans++;
  return keys;
}

void WaitForCompactions(rocksdb::DB* db) {
  for (;;) {
    uint64_t pending = 0, running = 0, flushes = 0;
    db->GetIntProperty("rocksdb.compaction-pending", &pending);
    db->GetIntProperty("rocksdb.num-running-compactions", &running);
    db->GetIntProperty("rocksdb.num-running-flushes", &flushes);
    if (pending == 0 && running == 0 && flushes == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

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

void PrintRow(const char* what, uint64_t len, const Totals& base,
              const Totals& filt) {
  const double n = static_cast<double>(base.scans);
  auto ratio = [](double a, double b) { return b == 0 ? 0.0 : a / b; };
  std::printf(
      "%-9s %5llu | %7.3f %7.3f %6.3f | %6.3f %6.3f | %7.0f %7.0f | %6.2f "
      "%6.2f | %6.2f %6.2f | %5.2f %5.2f\n",
      what, static_cast<unsigned long long>(len), base.data / n, filt.data / n,
      ratio(filt.data, base.data), base.index / n, filt.index / n,
      base.data_bytes / n, filt.data_bytes / n, base.scan_us / n,
      filt.scan_us / n, base.create_us / n, filt.create_us / n,
      ratio(filt.scan_us, base.scan_us), ratio(filt.create_us, base.create_us));
}

int Run() {
  harness::ScratchDir dir("sstfilter_range_scan");
  auto stats = rocksdb::CreateDBStatistics();
  rocksdb::Options options = MakeOptions(stats);
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, dir.path(), &raw);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  std::unique_ptr<rocksdb::DB> db(raw);
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
  WaitForCompactions(db.get());
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
  std::mt19937_64 rng(42);
  std::string lengths = FLAGS_lengths + ",";
  int mismatches = 0;
  for (size_t pos = 0; pos < lengths.size();) {
    const size_t comma = lengths.find(',', pos);
    const uint64_t len = std::stoull(lengths.substr(pos, comma - pos));
    pos = comma + 1;
    for (bool empty : {true, false}) {
      Totals base, filt;
      for (uint64_t q = 0; q < FLAGS_scans; q++) {
        uint64_t lo;
        if (empty) {
          for (;;) {
            lo = rng() >> 1;
            auto it = std::lower_bound(images.begin(), images.end(), lo);
            if (it == images.end() || *it >= lo + len) break;
          }
        } else {
          const uint64_t k = images[rng() % images.size()];
          lo = k - std::min<uint64_t>(k, rng() % len);
        }
        const std::string lower = BigEndian(lo), upper = BigEndian(lo + len);
        // Alternate which goes first, so caching favours neither.
        std::vector<std::string> a, b;
        if (q % 2 == 0) {
          a = ScanOnce(db.get(), stats.get(), lower, upper, false, &base);
          b = ScanOnce(db.get(), stats.get(), lower, upper, true, &filt);
        } else {
          b = ScanOnce(db.get(), stats.get(), lower, upper, true, &filt);
          a = ScanOnce(db.get(), stats.get(), lower, upper, false, &base);
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
