// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include "harness/leveldb_counting.h"

#include <cstring>
#include <memory>

#include "harness/io_counters.h"

namespace sstfilter {
namespace harness {

class CountingEnv::CountingFile final : public leveldb::RandomAccessFile {
 public:
  CountingFile(leveldb::RandomAccessFile* base, CountingEnv* env)
      : base_(base), env_(env) {}
  leveldb::Status Read(uint64_t offset, size_t n, leveldb::Slice* result,
                       char* scratch) const override {
    leveldb::Status s = base_->Read(offset, n, result, scratch);
    if (s.ok() && result->data() != scratch &&
        env_->copy_reads_.load(std::memory_order_relaxed)) {
      std::memcpy(scratch, result->data(), result->size());
      *result = leveldb::Slice(scratch, result->size());
    }
    env_->reads_.fetch_add(1, std::memory_order_relaxed);
    env_->bytes_.fetch_add(result->size(), std::memory_order_relaxed);
    CountRead(result->size());
    return s;
  }

 private:
  const std::unique_ptr<leveldb::RandomAccessFile> base_;
  CountingEnv* const env_;
};

leveldb::Status CountingEnv::NewRandomAccessFile(
    const std::string& name, leveldb::RandomAccessFile** result) {
  leveldb::Status s = target()->NewRandomAccessFile(name, result);
  if (s.ok() && IsTableFile(name)) {
    *result = new CountingFile(*result, this);  // LevelDB takes ownership
  }
  return s;
}

bool CountingEnv::IsTableFile(const std::string& name) {
  auto ends_with = [&name](const std::string& suffix) {
    return name.size() >= suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) ==
               0;
  };
  return ends_with(".ldb") || ends_with(".sst");
}

}  // namespace harness
}  // namespace sstfilter
