// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// An Env that counts the reads of LevelDB's table files (data-block reads
// per Get are what a filter saves), in total and, through CountRead
// (harness/io_counters.h), per measuring thread.
//
//   sstfilter::harness::CountingEnv env;   // wraps leveldb::Env::Default()
//   options.env = &env;                    // must outlive the DB
//   options.block_cache = zero-capacity cache; ReadOptions::fill_cache = false
//   env.Reset(); ... Gets ...; env.reads() // every block read is counted
//
// Table::Open reads a table's footer, index, metaindex and filter blocks
// through the same file: open every table (one Get each) before Reset() so
// that the counts are data blocks only.

#ifndef SSTFILTER_HARNESS_LEVELDB_COUNTING_H_
#define SSTFILTER_HARNESS_LEVELDB_COUNTING_H_

#include <leveldb/env.h>

#include <atomic>
#include <cstdint>
#include <string>

namespace sstfilter {
namespace harness {

// Counts Read calls and bytes on table files (*.ldb, and the *.sst of old
// DBs); other files pass through uncounted. Thread-safe.
class CountingEnv : public leveldb::EnvWrapper {
 public:
  CountingEnv() : EnvWrapper(leveldb::Env::Default()) {}

  leveldb::Status NewRandomAccessFile(
      const std::string& name, leveldb::RandomAccessFile** result) override;

  uint64_t reads() const { return reads_.load(std::memory_order_relaxed); }
  uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
  void Reset() {
    reads_.store(0, std::memory_order_relaxed);
    bytes_.store(0, std::memory_order_relaxed);
  }

  static bool IsTableFile(const std::string& name);

  // Whether a table read that returns bytes of a memory mapping (LevelDB
  // maps up to 1,000 tables) copies them into the caller's buffer, as
  // pread does: LevelDB caches no block that points into a mapping, so
  // without copies its block cache stays empty. Off at first.
  void set_copy_reads(bool copy) {
    copy_reads_.store(copy, std::memory_order_relaxed);
  }

 private:
  class CountingFile;

  std::atomic<bool> copy_reads_{false};
  std::atomic<uint64_t> reads_{0};
  std::atomic<uint64_t> bytes_{0};
};

}  // namespace harness
}  // namespace sstfilter

#endif  // SSTFILTER_HARNESS_LEVELDB_COUNTING_H_
