// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Shared by the LevelDB tests and benchmark: an Env that counts the reads
// of table files (data-block reads per Get are what a filter saves), and
// the absent keys they probe with.
//
//   sstfilter::test::CountingEnv env;      // wraps leveldb::Env::Default()
//   options.env = &env;                    // must outlive the DB
//   options.block_cache = zero-capacity cache; ReadOptions::fill_cache = false
//   env.Reset(); ... Gets ...; env.reads() // every block read is counted
//
// Table::Open reads a table's footer, index, metaindex and filter blocks
// through the same file: open every table (one Get each) before Reset() so
// that the counts are data blocks only.

#ifndef SSTFILTER_TESTS_LEVELDB_UTIL_H_
#define SSTFILTER_TESTS_LEVELDB_UTIL_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "leveldb/env.h"
#include "leveldb/slice.h"
#include "leveldb/status.h"
#include "tests/test_util.h"

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

// Absent keys for a DB holding Key(0 .. num_keys-1), j = 0, 1, ...: both
// sort inside the DB's key range, right after a stored key, so a Get
// consults that key's table and filter.
// "Far": another length and tail than any stored key ("key-00000012345a/17"),
// unrelated to it for any reasonable hash: the random-key case.
inline std::string FarAbsentKey(uint64_t j, uint64_t num_keys) {
  return Key(j * 7919 % num_keys) + "/" + std::to_string(j);
}
// "Neighbour": a stored key with its last byte changed, 'a' to 'b'.
inline std::string NeighbourAbsentKey(uint64_t j, uint64_t num_keys) {
  return NeighbourKey(j * 7919 % num_keys);
}
// A stored key with its last byte 'a' replaced by each of the 255 other
// byte values in turn (j % 255). LevelDB's Bloom hash is weak here for some
// values: at 16-byte keys, 36 keys per filter and 10 bits/key it gives ~2%
// false positives for 'b' but ~13% for 'q' (a difference of 16).
inline std::string AnyByteNeighbourKey(uint64_t j, uint64_t num_keys) {
  std::string k = Key(j * 7919 % num_keys);
  k.back() = static_cast<char>('a' + 1 + j % 255);
  return k;
}

}  // namespace test
}  // namespace sstfilter

#endif  // SSTFILTER_TESTS_LEVELDB_UTIL_H_
