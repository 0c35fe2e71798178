// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Short scans over [lower, upper) on a RocksDB database and what each one
// costs, for bench/rocksdb_range_scan and the compare tool's range
// workload (docs/COMPARE.md). Keys are the harness's (harness/keys.h):
// their image is their first 8 bytes, big-endian; a range of length L is
// the images [lo, lo + L), scanned as [BigEndian8(lo), BigEndian8(lo + L)).
//
//   RangeSampler ranges(sorted_images, seed);
//   ScanCosts none, filtered;
//   ScanHow how;                      // bounds only, total order
//   auto keys = MeasureScan(db, stats, lo, hi, how, &none);
//   how.range_filter = true;          // RocksDBRangeScan::Apply
//   auto same = MeasureScan(db, stats, lo, hi, how, &filtered);
//
// Counting: the database needs a block cache with
// cache_index_and_filter_blocks, and `stats` its statistics, so that every
// data and index block a scan touches is a cache hit or miss (tickers
// BLOCK_CACHE_{DATA,INDEX}_{HIT,MISS}). Scans read with fill_cache = false:
// no data block enters the cache, so each one accessed is read from the
// file, while the index and filter blocks that tables put in the cache when
// opened stay there. Reads from files are counted by the perf context
// (block_read_count, block_read_byte, index_block_read_count), whose level
// MeasureScan sets on its thread.

#ifndef SSTFILTER_HARNESS_ROCKSDB_RANGE_SCAN_H_
#define SSTFILTER_HARNESS_ROCKSDB_RANGE_SCAN_H_

#include <rocksdb/db.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table_properties.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/keys.h"

namespace sstfilter {
namespace harness {

// The 8 big-endian bytes of x.
std::string BigEndian8(uint64_t x);

// Costs of a set of scans, summed.
struct ScanCosts {
  uint64_t scans = 0;
  uint64_t keys = 0;          // keys returned
  uint64_t data_blocks = 0;   // data blocks accessed (cache hits + misses)
  uint64_t index_blocks = 0;  // index blocks accessed (hits + misses)
  uint64_t block_reads = 0;   // perf block_read_count: blocks read from files
  uint64_t block_read_bytes = 0;   // perf block_read_byte
  uint64_t index_block_reads = 0;  // perf index_block_read_count
  uint64_t tables_checked = 0;     // range filter: tables asked
  uint64_t tables_passed = 0;      // ... that may hold a key of the range
  double scan_us = 0;              // NewIterator, Seek, Next to the end
  double create_us = 0;            // NewIterator alone

  double PerScan(uint64_t v) const {
    return scans == 0 ? 0 : static_cast<double>(v) / scans;
  }
  double PerScan(double v) const { return scans == 0 ? 0 : v / scans; }
};

// A table filter of another library for one scan's [lower, upper), such
// as RocksDB's SstQueryFilterConfigsManager::Factory::
// GetTableFilterForRangeQuery: false skips the table.
using TableFilter = std::function<bool(const rocksdb::TableProperties&)>;
using TableFilterMaker = std::function<TableFilter(
    const rocksdb::Slice& lower, const rocksdb::Slice& upper)>;

// How a scan reads. Bounds are always set (iterate_lower_bound and
// iterate_upper_bound).
struct ScanHow {
  // RocksDBRangeScan::Apply: bounds and the range filter's table_filter.
  bool range_filter = false;
  // Or another table filter, made for the scan's bounds and counted the
  // same way (tables_checked, tables_passed).
  const TableFilterMaker* other_filter = nullptr;
  // Prefix mode (a prefix_extractor's Bloom): prefix_same_as_start = true,
  // total_order_seek = false; REQUIRES the range within one prefix.
  // Otherwise total_order_seek = true, so a database with a
  // prefix_extractor scans in total order.
  bool prefix_seek = false;
};

// Scans [lower, upper) from Seek(lower), adds its costs to *costs and
// returns its keys.
std::vector<std::string> MeasureScan(rocksdb::DB* db,
                                     rocksdb::Statistics* stats,
                                     const std::string& lower,
                                     const std::string& upper,
                                     const ScanHow& how, ScanCosts* costs);

// Microseconds per NewIterator (and its deletion) over [lower, upper):
// medians over `rounds` alternating batches of `batch` iterators each,
// made with bounds only (*plain_us) and with a table filter made and
// applied per iterator (*filtered_us): a RocksDBRangeScan's, or, if
// `other` is not null, the one it makes.
void MeasureIteratorCreation(rocksdb::DB* db, const std::string& lower,
                             const std::string& upper, int rounds, int batch,
                             double* plain_us, double* filtered_us,
                             const TableFilterMaker* other = nullptr);

// Ranges of images of a set of keys.
class RangeSampler {
 public:
  // `images`: sorted ascending.
  RangeSampler(const std::vector<uint64_t>* images, uint64_t seed)
      : images_(images), rng_(seed) {}
  // lo of a range [lo, lo + len) holding no image (uniform among such).
  uint64_t Empty(uint64_t len);
  // lo of a range [lo, lo + len) that starts up to len - 1 before a random
  // image, so it holds at least that one. REQUIRES: images non-empty.
  uint64_t NonEmpty(uint64_t len);

 private:
  const std::vector<uint64_t>* images_;
  Random64 rng_;
};

// Waits until `db` has no flush or compaction running or pending: every
// such property 0 at 3 polls in a row, 1 ms apart (RocksDB 7.8 has no
// WaitForCompact). An error if a background job failed. With
// `compaction_pending` false, "rocksdb.compaction-pending" is not waited
// for: under universal compaction RocksDB 7.8 can leave it set with no
// compaction running or to come (seen on natural trees of 10^6 keys); the
// others must then stay 0 for 50 polls (a compaction just scheduled shows
// in no other property until its thread starts).
rocksdb::Status WaitForCompactions(rocksdb::DB* db,
                                   bool compaction_pending = true);

}  // namespace harness
}  // namespace sstfilter

#endif  // SSTFILTER_HARNESS_ROCKSDB_RANGE_SCAN_H_
