// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include "harness/rocksdb_range_scan.h"

#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <thread>

#include "adapters/rocksdb/rocksdb_compat.h"
#include "sstfilter/rocksdb.h"

namespace sstfilter {
namespace harness {
namespace {

using Clock = std::chrono::steady_clock;

double MicrosBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

// The tickers a scan is counted by, read before and after it.
struct Tickers {
  uint64_t data = 0, index = 0;

  explicit Tickers(rocksdb::Statistics* s)
      : data(s->getTickerCount(rocksdb::BLOCK_CACHE_DATA_HIT) +
             s->getTickerCount(rocksdb::BLOCK_CACHE_DATA_MISS)),
        index(s->getTickerCount(rocksdb::BLOCK_CACHE_INDEX_HIT) +
              s->getTickerCount(rocksdb::BLOCK_CACHE_INDEX_MISS)) {}
};

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::string BigEndian8(uint64_t x) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; i++) s[i] = static_cast<char>(x >> (56 - 8 * i));
  return s;
}

std::vector<std::string> MeasureScan(rocksdb::DB* db,
                                     rocksdb::Statistics* stats,
                                     const std::string& lower,
                                     const std::string& upper,
                                     const ScanHow& how, ScanCosts* costs) {
  RocksDBRangeScan scan(lower, upper);
  const rocksdb::Slice lo(lower), hi(upper);
  rocksdb::ReadOptions ro;
  uint64_t other_checked = 0, other_passed = 0;
  TableFilter other;  // outlives the iterator
  if (how.range_filter) {
    scan.Apply(&ro);
  } else {
    ro.iterate_lower_bound = &lo;
    ro.iterate_upper_bound = &hi;
  }
  if (how.other_filter != nullptr) {
    other = [&, f = (*how.other_filter)(lo, hi)](
                const rocksdb::TableProperties& props) {
      const bool may = f(props);
      other_checked++;
      other_passed += may;
      return may;
    };
    SetTableFilter(&ro.table_filter, &other);
  }
  // Data blocks are never cached, so every one is read from the file; the
  // index and filter blocks the tables put in the cache stay there.
  ro.fill_cache = false;
  ro.prefix_same_as_start = how.prefix_seek;
  ro.total_order_seek = !how.prefix_seek;
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  rocksdb::get_perf_context()->Reset();
  const Tickers before(stats);
  std::vector<std::string> keys;
  const auto start = Clock::now();
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ro));
  const auto created = Clock::now();
  for (it->Seek(lower); it->Valid(); it->Next()) {
    keys.push_back(it->key().ToString());
  }
  it.reset();
  const auto end = Clock::now();
  const Tickers after(stats);
  const rocksdb::PerfContext* perf = rocksdb::get_perf_context();
  costs->scans++;
  costs->keys += keys.size();
  costs->data_blocks += after.data - before.data;
  costs->index_blocks += after.index - before.index;
  costs->block_reads += perf->block_read_count;
  costs->block_read_bytes += perf->block_read_byte;
  costs->index_block_reads += perf->index_block_read_count;
  costs->tables_checked += scan.tables_checked() + other_checked;
  costs->tables_passed +=
      scan.tables_checked() - scan.tables_skipped() + other_passed;
  costs->scan_us += MicrosBetween(start, end);
  costs->create_us += MicrosBetween(start, created);
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
  return keys;
}

void MeasureIteratorCreation(rocksdb::DB* db, const std::string& lower,
                             const std::string& upper, int rounds, int batch,
                             double* plain_us, double* filtered_us,
                             const TableFilterMaker* other) {
  const rocksdb::Slice lo(lower), hi(upper);
  std::vector<double> plain, filtered;
  for (int r = 0; r < rounds; r++) {
    // Alternate which goes first, so that neither always follows the other.
    for (int side = 0; side < 2; side++) {
      const bool filter = (side + r) % 2 == 1;
      const auto start = Clock::now();
      for (int i = 0; i < batch; i++) {
        RocksDBRangeScan scan(lower, upper);
        TableFilter made;
        rocksdb::ReadOptions ro;
        if (filter && other == nullptr) {
          scan.Apply(&ro);
        } else {
          ro.iterate_lower_bound = &lo;
          ro.iterate_upper_bound = &hi;
        }
        if (filter && other != nullptr) {
          made = (*other)(lo, hi);
          SetTableFilter(&ro.table_filter, &made);
        }
        std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ro));
      }
      (filter ? filtered : plain)
          .push_back(MicrosBetween(start, Clock::now()) / batch);
    }
  }
  *plain_us = Median(plain);
  *filtered_us = Median(filtered);
}

uint64_t RangeSampler::Empty(uint64_t len) {
  const uint64_t max_lo = std::numeric_limits<uint64_t>::max() - len;
  for (;;) {
    const uint64_t lo = rng_.Next();
    if (lo > max_lo) continue;
    auto it = std::lower_bound(images_->begin(), images_->end(), lo);
    if (it == images_->end() || *it >= lo + len) return lo;
  }
}

uint64_t RangeSampler::NonEmpty(uint64_t len) {
  const uint64_t max_lo = std::numeric_limits<uint64_t>::max() - len;
  for (;;) {
    const uint64_t k = (*images_)[rng_.Uniform(images_->size())];
    const uint64_t lo = k - std::min<uint64_t>(k, rng_.Uniform(len));
    if (lo <= max_lo) return lo;
  }
}

rocksdb::Status WaitForCompactions(rocksdb::DB* db, bool compaction_pending) {
  const char* const kBusy[] = {
      "rocksdb.num-running-flushes", "rocksdb.mem-table-flush-pending",
      "rocksdb.num-running-compactions", "rocksdb.compaction-pending"};
  const size_t busy_properties = compaction_pending ? 4 : 3;
  // A finished flush or compaction may schedule the next one a moment
  // later; until its thread starts only "compaction-pending" shows it, so
  // without that property the quiet must last longer.
  const int quiet_polls = compaction_pending ? 3 : 50;
  int quiet = 0;
  while (quiet < quiet_polls) {
    uint64_t errors = 0;
    if (db->GetIntProperty("rocksdb.background-errors", &errors) &&
        errors != 0) {
      return rocksdb::Status::Aborted(
          std::to_string(errors) +
          " background errors (a flush or compaction failed; see the "
          "database's LOG)");
    }
    bool busy = false;
    for (size_t i = 0; i < busy_properties; i++) {
      const char* property = kBusy[i];
      uint64_t v = 0;
      if (!db->GetIntProperty(property, &v)) {
        return rocksdb::Status::NotSupported(std::string("property ") +
                                             property + " unavailable");
      }
      busy = busy || v != 0;
    }
    quiet = busy ? 0 : quiet + 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return rocksdb::Status::OK();
}

}  // namespace harness
}  // namespace sstfilter
