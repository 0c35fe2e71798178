// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// A LevelDB Env that counts the reads of table files, for the LevelDB tests
// and benchmark: data-block reads per Get are what a filter saves.
//
//   sstfilter::test::CountingEnv env;      // wraps leveldb::Env::Default()
//   options.env = &env;                    // must outlive the DB
//   options.block_cache = zero-capacity cache; ReadOptions::fill_cache = false
//   env.Reset(); ... Gets ...; env.reads() // every block read is counted
//
// Table::Open reads a table's footer, index, metaindex and filter blocks
// through the same file: open every table (one Get each) before Reset() so
// that the counts are data blocks only.

#ifndef SSTFILTER_TESTS_LEVELDB_COUNTING_ENV_H_
#define SSTFILTER_TESTS_LEVELDB_COUNTING_ENV_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "leveldb/env.h"
#include "leveldb/slice.h"
#include "leveldb/status.h"

namespace sstfilter {
namespace test {

// Counts Read calls and bytes on table files (*.ldb, and the *.sst of old
// DBs); other files pass through uncounted. Thread-safe.
class CountingEnv : public leveldb::EnvWrapper {
 public:
  CountingEnv() : EnvWrapper(leveldb::Env::Default()) {}

  leveldb::Status NewRandomAccessFile(
      const std::string& name, leveldb::RandomAccessFile** result) override {
    leveldb::Status s = target()->NewRandomAccessFile(name, result);
    if (s.ok() && IsTableFile(name)) {
      *result = new CountingFile(*result, this);  // LevelDB takes ownership
    }
    return s;
  }

  uint64_t reads() const { return reads_.load(std::memory_order_relaxed); }
  uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
  void Reset() {
    reads_.store(0, std::memory_order_relaxed);
    bytes_.store(0, std::memory_order_relaxed);
  }

  static bool IsTableFile(const std::string& name) {
    auto ends_with = [&name](const std::string& suffix) {
      return name.size() >= suffix.size() &&
             name.compare(name.size() - suffix.size(), suffix.size(), suffix) ==
                 0;
    };
    return ends_with(".ldb") || ends_with(".sst");
  }

 private:
  class CountingFile : public leveldb::RandomAccessFile {
   public:
    CountingFile(leveldb::RandomAccessFile* base, CountingEnv* env)
        : base_(base), env_(env) {}
    leveldb::Status Read(uint64_t offset, size_t n, leveldb::Slice* result,
                         char* scratch) const override {
      leveldb::Status s = base_->Read(offset, n, result, scratch);
      env_->reads_.fetch_add(1, std::memory_order_relaxed);
      env_->bytes_.fetch_add(result->size(), std::memory_order_relaxed);
      return s;
    }

   private:
    const std::unique_ptr<leveldb::RandomAccessFile> base_;
    CountingEnv* const env_;
  };

  std::atomic<uint64_t> reads_{0};
  std::atomic<uint64_t> bytes_{0};
};

}  // namespace test
}  // namespace sstfilter

#endif  // SSTFILTER_TESTS_LEVELDB_COUNTING_ENV_H_
